"""HTML forms of the leaderboard app.

Forms only collect and shape input; every rule lives in the services, whose ValidationErrors
the views attach back to these forms (`attach_service_errors`).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError

from common.forms import NamedErrorsMixin, error_sentence
from ingestion.models import Question
from leaderboard.services.predictions import question_options


class SignupForm(NamedErrorsMixin, UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; only used to reach you about your agents.")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")


class TeamForm(NamedErrorsMixin, forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown on the leaderboard next to your agents.")


class MemberAddForm(NamedErrorsMixin, forms.Form):
    username = forms.CharField(max_length=150, help_text="The person must already have an account.")


class AgentForm(NamedErrorsMixin, forms.Form):
    name = forms.CharField(max_length=200, help_text="The URL slug is derived from it once and never changes.")
    model_name = forms.CharField(max_length=200, required=False, label="Model name", help_text="e.g. gpt-4o-2024-08-06")
    provider = forms.CharField(max_length=200, required=False, help_text="e.g. OpenAI, Anthropic, self-hosted")
    knowledge_cutoff = forms.DateField(
        required=False,
        label="Declared knowledge cutoff",
        widget=forms.DateInput(attrs={"type": "date"}),
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": "Enter the cutoff as YYYY-MM-DD."},
        help_text="Agents without a declared cutoff are excluded from replay rankings.",
    )
    tools_description = forms.CharField(
        required=False,
        label="Tools used",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Search, retrieval, code execution, the Hindsight evidence API…",
    )


class TokenForm(NamedErrorsMixin, forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="A label to tell your tokens apart.")


class ForecastTargetForm(forms.Form):
    """Step one of the web submission: which agent (the question is searched for beside it)."""

    agent = forms.ChoiceField(label="Agent")

    def __init__(self, *args: Any, agents: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agent_field = self.fields["agent"]
        assert isinstance(agent_field, forms.ChoiceField)
        agent_field.choices = [(a.slug, f"{a.name} ({a.team.name})") for a in agents]


def new_idempotency_key() -> str:
    return f"web-{uuid.uuid4().hex}"


def _number_or_raw(text: str | None) -> Any:
    """A number when the text parses as one; otherwise the raw text, so that the forecast
    service reports the problem in exactly the words the API uses for a non-number."""
    text = (text or "").strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _json_or_error(text: str, field: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError({field: f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"}) from exc


class ForecastForm(forms.Form):
    """Step two: a type-aware form whose cleaned data is shaped exactly like the API body."""

    session = forms.CharField(required=False, widget=forms.HiddenInput)
    idempotency_key = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)
    sources = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One per line: an article id from the evidence API (a number) or a URL.",
    )
    rationale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    graph_events = forms.CharField(
        required=False,
        label="Forecast graph: events (JSON)",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text=(
            'A JSON list, e.g. [{"id": "e1", "title": "Talks resume", "description": "…", "date": "2026-03-01"}]. '
            "Leave both graph boxes empty for no graph."
        ),
    )
    graph_edges = forms.CharField(
        required=False,
        label="Forecast graph: edges (JSON)",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text=(
            'A JSON list, e.g. [{"source": "e1", "target": "e2", "relation": "Causes", "strength": 0.6, '
            '"confidence": 0.7}]. Relations: Causes, Enables, Prevents, Inhibits, Amplifies, Triggers, Correlates.'
        ),
    )

    # Which form field shows an error whose service path starts with a given prefix; the longest
    # matching prefix wins. Filled per question type in __init__.
    prediction_field_for_path: dict[str, str]

    def __init__(self, *args: Any, question: Question, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        self.prediction_fields: list[str] = []
        self.prediction_field_for_path = {"prediction": "__all__"}
        if not self.is_bound and not self.initial.get("idempotency_key"):
            # One key per rendered form: a double-clicked submit stores one forecast.
            self.initial["idempotency_key"] = new_idempotency_key()
        getattr(self, f"_add_{question.type}_fields")()
        # Type-specific inputs come first on the page.
        order = [*self.prediction_fields, "sources", "rationale", "graph_events", "graph_edges"]
        self.order_fields(order)

    def _add(self, name: str, field: forms.Field, path: str | None = None) -> None:
        self.fields[name] = field
        self.prediction_fields.append(name)
        if path is not None:
            self.prediction_field_for_path[path] = name

    # --- one builder per question type -----------------------------------------------------
    def _add_binary_fields(self) -> None:
        self._add(
            "probability",
            forms.CharField(
                required=False,
                label="Probability of YES",
                widget=forms.TextInput(attrs={"inputmode": "decimal", "placeholder": "0.0 to 1.0"}),
            ),
            "prediction.probability",
        )
        self.prediction_field_for_path["prediction"] = "probability"

    def _add_multiple_choice_fields(self) -> None:
        for i, option in enumerate(question_options(self.question)):
            self._add(
                f"option_{i}",
                forms.CharField(
                    required=False,
                    label=f"P({option})",
                    widget=forms.TextInput(attrs={"inputmode": "decimal", "placeholder": "0.0 to 1.0"}),
                ),
                f"prediction.probabilities.{option}",
            )
        self.prediction_field_for_path["prediction"] = "__all__"

    def _add_quantity_fields(self) -> None:
        unit = f" ({self.question.unit})" if self.question.unit else ""
        self._add(
            "quantity_mode",
            forms.ChoiceField(
                label="Forecast as",
                choices=[("value", "A point value"), ("interval", "An interval"), ("quantiles", "Quantiles")],
                widget=forms.RadioSelect,
                initial="value",
            ),
        )
        self._add("value", forms.CharField(required=False, label=f"Value{unit}"), "prediction.value")
        self._add("interval_low", forms.CharField(required=False, label=f"Interval low{unit}"), "prediction.interval")
        self._add("interval_high", forms.CharField(required=False, label=f"Interval high{unit}"))
        self._add(
            "quantiles",
            forms.CharField(
                required=False,
                label=f"Quantiles{unit}",
                widget=forms.Textarea(attrs={"rows": 3}),
                help_text='One "level: value" per line (e.g. "0.1: 40"), or a JSON object {"0.1": 40, "0.5": 55}.',
            ),
            "prediction.quantiles",
        )

    def _add_timeframe_fields(self) -> None:
        examples = {
            "year": "2026",
            "quarter": "2026-Q3",
            "month": "2026-07",
            "week": "2026-W28",
            "day": "2026-07-15",
        }
        example = examples.get(self.question.granularity, "2026-07")
        self._add(
            "period",
            forms.CharField(
                required=False,
                label=f"Period ({self.question.get_granularity_display() or 'any granularity'})",
                help_text=f"e.g. {example}",
            ),
            "prediction.period",
        )
        self.prediction_field_for_path["prediction"] = "period"

    def _add_relation_fields(self) -> None:
        self._add(
            "relations",
            forms.CharField(
                required=False,
                label="Relations (CAMEO codes)",
                widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
                help_text=(
                    'A JSON object {"04": ["042", "043"], "19": []}, or one first-level code per line '
                    'followed by its second-level codes: "04: 042, 043".'
                ),
            ),
            "prediction.relations",
        )
        self.prediction_field_for_path["prediction"] = "relations"

    def _add_open_ended_fields(self) -> None:
        self._add(
            "events",
            forms.CharField(
                required=False,
                label="Predicted events",
                widget=forms.Textarea(attrs={"rows": 5}),
                help_text="One future event per line.",
            ),
            "prediction.events",
        )
        self._add(
            "answer",
            forms.CharField(
                required=False,
                label="Answer (argument questions)",
                widget=forms.Textarea(attrs={"rows": 3}),
                help_text="For questions asking for one answer instead of a list of events.",
            ),
            "prediction.answer",
        )

    # --- shaping into the API body ----------------------------------------------------------
    def build_prediction(self) -> dict[str, Any]:
        data = self.cleaned_data
        kind = self.question.type
        # A blank input leaves its key out, so that the service reports it as missing.
        if kind == Question.Type.BINARY:
            raw = (data.get("probability") or "").strip()
            return {"probability": _number_or_raw(raw)} if raw else {}
        if kind == Question.Type.MULTIPLE_CHOICE:
            probabilities = {}
            for i, option in enumerate(question_options(self.question)):
                raw = (data.get(f"option_{i}") or "").strip()
                # A blank option is left out, so the service names it as missing.
                if raw:
                    probabilities[option] = _number_or_raw(raw)
            return {"probabilities": probabilities}
        if kind == Question.Type.QUANTITY:
            mode = data.get("quantity_mode") or "value"
            if mode == "interval":
                return {
                    "interval": [
                        _number_or_raw(data.get("interval_low")) if (data.get("interval_low") or "").strip() else None,
                        _number_or_raw(data.get("interval_high"))
                        if (data.get("interval_high") or "").strip()
                        else None,
                    ]
                }
            if mode == "quantiles":
                return {"quantiles": self._parse_quantiles(data.get("quantiles", ""))}
            raw = (data.get("value") or "").strip()
            return {"value": _number_or_raw(raw)} if raw else {}
        if kind == Question.Type.TIMEFRAME:
            raw = (data.get("period") or "").strip()
            return {"period": raw} if raw else {}
        if kind == Question.Type.RELATION:
            return {"relations": self._parse_relations(data.get("relations", ""))}
        if kind == Question.Type.OPEN_ENDED:
            events = [line.strip() for line in (data.get("events") or "").splitlines() if line.strip()]
            answer = (data.get("answer") or "").strip()
            prediction: dict[str, Any] = {}
            if events or not answer:
                prediction["events"] = events
            if answer:
                prediction["answer"] = answer
            return prediction
        raise ValidationError(f"Unsupported question type {kind!r}.")

    def _parse_quantiles(self, text: str) -> Any:
        text = text.strip()
        if text.startswith("{"):
            return _json_or_error(text, "quantiles")
        quantiles: dict[str, Any] = {}
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            level, sep, value = line.partition(":")
            if not sep:
                level, sep, value = line.partition("=")
            if not sep:
                raise ValidationError(
                    {"quantiles": f'must have one "level: value" per line, e.g. "0.5: 55"; line {n} has not'}
                )
            quantiles[level.strip()] = _number_or_raw(value)
        return quantiles

    def _parse_relations(self, text: str) -> Any:
        text = text.strip()
        if text.startswith("{"):
            return _json_or_error(text, "relations")
        relations: dict[str, list[str]] = {}
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            code, sep, children = line.partition(":")
            if not sep:
                raise ValidationError(
                    {"relations": f'must have one "04: 042, 043" per line ("04:" for none); line {n} has not'}
                )
            relations[code.strip()] = [c.strip() for c in children.replace(";", ",").split(",") if c.strip()]
        return relations

    def build_sources(self) -> list[Any]:
        sources: list[Any] = []
        for line in (self.cleaned_data.get("sources") or "").splitlines():
            line = line.strip()
            if line:
                sources.append(int(line) if line.isdigit() else line)
        return sources

    def build_graph(self) -> dict[str, Any] | None:
        events_text = (self.cleaned_data.get("graph_events") or "").strip()
        edges_text = (self.cleaned_data.get("graph_edges") or "").strip()
        if not events_text and not edges_text:
            return None
        events = _json_or_error(events_text, "graph_events") if events_text else []
        edges = _json_or_error(edges_text, "graph_edges") if edges_text else []
        return {"events": events, "edges": edges}

    def build_submission(self) -> dict[str, Any]:
        """The service arguments, shaped like the API's request body.

        Raises ValidationError (a dict keyed by form field) when text could not be parsed at all.
        """
        errors: dict[str, list[str]] = {}
        result: dict[str, Any] = {}
        for key, builder in (
            ("prediction", self.build_prediction),
            ("sources", self.build_sources),
            ("graph", self.build_graph),
        ):
            try:
                result[key] = builder()
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    errors.setdefault(field, []).extend(messages)
        if errors:
            raise ValidationError(errors)
        result["rationale"] = self.cleaned_data.get("rationale") or ""
        result["session_id"] = (self.cleaned_data.get("session") or "").strip() or None
        result["idempotency_key"] = (self.cleaned_data.get("idempotency_key") or "").strip()
        return result

    # --- service errors back onto fields ---------------------------------------------------
    def field_for_path(self, path: str) -> str | None:
        """The form field that shows a service error at `path` (None: the form as a whole)."""
        if path in self.fields:
            return path
        head = path.split(".", 1)[0].split("[", 1)[0]
        if head == "prediction":
            best = ""
            for prefix in self.prediction_field_for_path:
                if (path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")) and len(
                    prefix
                ) > len(best):
                    best = prefix
            field = self.prediction_field_for_path.get(best, "__all__")
            return None if field == "__all__" else field
        if head == "graph":
            if path.startswith("graph.edges"):
                return "graph_edges"
            return "graph_events"
        if head in ("sources", "rationale", "session", "idempotency_key"):
            return head
        return None

    def _primary_paths(self, field: str | None) -> set[str]:
        if field is None:
            return {"", "__all__", "non_field_errors"}
        paths = {p for p, f in self.prediction_field_for_path.items() if f == field}
        if field == "graph_events":
            paths |= {"graph", "graph.events"}
        elif field == "graph_edges":
            paths.add("graph.edges")
        paths.add(field)
        return paths

    def attach_service_errors(self, error: ValidationError) -> None:
        """Show each message of a service ValidationError next to its field, as a sentence that
        names what it is about in the form's words (the service's words follow the name)."""
        items = list(error.message_dict.items()) if hasattr(error, "error_dict") else [("", error.messages)]
        for path, messages in items:
            field = self.field_for_path(path) if path and path not in ("__all__", "non_field_errors") else None
            for message in messages:
                self.add_error(field, error_sentence(self.path_name(path), message))

    def path_name(self, path: str) -> str:
        """What a person calls the part of the forecast at a service field path (or at a form
        field's own name, for text the form could not read)."""
        if path in _FORM_FIELD_NAMES:
            return _FORM_FIELD_NAMES[path]
        if path in self.fields and path not in ("sources", "rationale", "session"):
            label = str(self.fields[path].label or path)
            return f"The {label[0].lower()}{label[1:]}"
        return describe_path(path)


# ---------------------------------------------------------------------------------------------
# Service messages as sentences a person reads
# ---------------------------------------------------------------------------------------------

_FORM_FIELD_NAMES = {"graph_events": "The graph's events box", "graph_edges": "The graph's edges box"}
_STEP = re.compile(r"\.?([^.\[]+)|\[(\d+)\]")
_PARTS = {"events": "event", "edges": "edge"}
_ENDS = {"0": "low end", "1": "high end"}


def describe_path(path: str) -> str:
    """A service field path in words: ``graph.edges[2].target`` -> "Graph edge 3's target",
    ``sources[0]`` -> "Source 1 (line 1)", ``prediction.probabilities.Yes`` -> "P(Yes)"."""
    # Option names and quantile levels may hold dots ("0.5"): they are the rest of the path.
    for prefix, words in (("prediction.probabilities.", "P({})"), ("prediction.quantiles.", "Quantile {}")):
        if path.startswith(prefix):
            return words.format(path[len(prefix) :])
    steps = [name or f"[{index}]" for name, index in _STEP.findall(path)]
    if not steps or steps == ["__all__"] or steps == ["non_field_errors"]:
        return "This forecast"
    head, rest = steps[0], steps[1:]
    if head == "prediction":
        return _prediction_words(rest)
    if head == "sources":
        return f"Source {int(rest[0][1:-1]) + 1} (line {int(rest[0][1:-1]) + 1})" if rest else "The sources"
    if head == "graph":
        if not rest:
            return "The forecast graph"
        part = rest[0]
        if len(rest) == 1:
            return f"The graph's {part}"
        words = f"Graph {_PARTS.get(part, part)} {int(rest[1][1:-1]) + 1}" if rest[1].startswith("[") else part
        return f"{words}'s {rest[2]}" if len(rest) > 2 else words
    return {"session": "The replay session", "question": "The question", "rationale": "The rationale"}.get(
        head, f"The field “{path}”"
    )


def _prediction_words(rest: list[str]) -> str:
    if not rest:
        return "The forecast"
    kind, more = rest[0], rest[1:]
    if kind == "probabilities":
        return f"P({more[0]})" if more else "The option probabilities"
    if kind == "interval":
        return f"The interval's {_ENDS.get(more[0][1:-1], 'end')}" if more else "The interval"
    if kind == "quantiles":
        return f"Quantile {more[0]}" if more else "The quantiles"
    if kind == "relations":
        if not more:
            return "The relations"
        if len(more) == 1:
            return f"First-level code {more[0]}"
        return f"Second-level code {int(more[1][1:-1]) + 1} under {more[0]}"
    if kind == "events":
        return f"Predicted event {int(more[0][1:-1]) + 1}" if more else "The predicted events"
    known = {
        "probability": "The probability of YES",
        "value": "The value",
        "period": "The period",
        "answer": "The answer",
    }
    return known.get(kind, f"The key “{kind}” of the forecast")
