"""The curation queue's edit form for draft questions."""

from __future__ import annotations

from typing import Any

from django import forms

from ingestion.models import Question
from ingestion.services.curation import EDITABLE_FIELDS


class OptionsField(forms.Field):
    """Multiple-choice options, one per line."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return value

    def to_python(self, value: Any) -> list[str]:
        text = value if isinstance(value, str) else ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class DraftQuestionForm(forms.ModelForm):
    options = OptionsField(required=False, help_text="Multiple choice only: one option per line.")

    class Meta:
        model = Question
        fields = list(EDITABLE_FIELDS)
        widgets = {
            "open_at": forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"}),
            "close_at": forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"}),
            "resolve_by": forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM (UTC)"}),
        }

    def clean_title(self) -> str:
        title: str = self.cleaned_data["title"].strip()
        if not title:
            raise forms.ValidationError("A question needs a title.")
        return title

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        qtype = self.instance.type
        options = data.get("options") or []
        if qtype == Question.Type.MULTIPLE_CHOICE:
            if len(options) < 2:
                self.add_error("options", "A multiple-choice question needs at least two options.")
            elif len(set(options)) != len(options):
                self.add_error("options", "Options must be distinct.")
        elif options:
            self.add_error("options", f"Options only apply to multiple-choice questions, not {qtype}.")
        if qtype == Question.Type.TIMEFRAME and not data.get("granularity"):
            self.add_error("granularity", "A timeframe question needs a granularity.")
        open_at, close_at, resolve_by = data.get("open_at"), data.get("close_at"), data.get("resolve_by")
        if open_at and close_at and close_at <= open_at:
            self.add_error("close_at", "The deadline must be after open_at.")
        if close_at and resolve_by and resolve_by < close_at:
            self.add_error("resolve_by", "resolve_by cannot be before the deadline.")
        if not (data.get("resolution_criteria") or "").strip():
            self.add_error("resolution_criteria", "Say how the question resolves.")
        return data
