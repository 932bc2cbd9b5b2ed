"""POST /api/v1/forecasts/, POST /api/v1/forecasts/batch/, GET /api/v1/forecasts/ (own only)."""

from __future__ import annotations

import threading
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.scoring.definitions import GRADE_SCORES
from ingestion.models import Question
from leaderboard.apis.common import (
    ClosedInputSerializer,
    ErrorSerializer,
    IsAgent,
    PageQuery,
    SessionIdField,
    api_exception,
    error_body,
    id_field,
    page_of,
    paginated,
)
from leaderboard.authentication import request_agent
from leaderboard.models import Forecast, Grade
from leaderboard.schema import MAX_BATCH_ITEMS
from leaderboard.selectors.forecasts import forecast_current_grades, forecast_list_for_agent
from leaderboard.selectors.grades import grade_status
from leaderboard.services.errors import ForecastConflict, NotFound, ServiceError
from leaderboard.services.forecast_fields import MAX_EVENTS
from leaderboard.services.forecasts import ForecastInput, SubmitResult, forecast_submit, forecast_submit_batch


class ParsedJSONField(serializers.JSONField):
    """A value of an already-parsed JSON body, kept as is (NaN and infinities included) so that the
    forecast validation can reject them naming the exact field, e.g. ``prediction.probability``."""

    def to_internal_value(self, data: Any) -> Any:
        if getattr(data, "is_json_string", False):
            return super().to_internal_value(data)
        return data


_PROBABILITY = {"type": "number", "minimum": 0, "maximum": 1}
# A prediction holds one of these keys and nothing else: a key outside them is refused whatever the
# question, so the schema closes the object; which one key the question's type takes (so also that it
# is only one), and its options, bounds and granularity, are the 400 the operation describes. The
# schema states no maximum of one key: a tool that learns constraints from refusals (schemathesis)
# adds up the "is required" of several question types, and with a maximum of one nothing would be left.
PREDICTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Exactly one key, the one of the question's type: binary `probability`; multiple_choice "
    "`probabilities`; quantity `value`, `interval` or `quantiles`; timeframe `period`; relation `relations`; "
    "open_ended `events` or `answer` (see the API description).",
    "properties": {
        "probability": _PROBABILITY,
        "probabilities": {"type": "object", "additionalProperties": _PROBABILITY},
        "value": {"type": "number"},
        "interval": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "quantiles": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "number"}},
        "period": {"type": "string"},
        "relations": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
        "events": {"type": "array", "minItems": 1, "maxItems": MAX_EVENTS, "items": {"type": "string"}},
        "answer": {"type": "string"},
    },
    "minProperties": 1,
    "additionalProperties": False,
}


@extend_schema_field(PREDICTION_SCHEMA)
class PredictionField(ParsedJSONField):
    pass


@extend_schema_field(
    {
        "type": "array",
        "maxItems": 200,
        "items": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^https?://"}]},
    }
)
class SourcesField(ParsedJSONField):
    pass


@extend_schema_field({"type": "string"})
class RationaleField(ParsedJSONField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {"events": {"type": "array", "maxItems": 50}, "edges": {"type": "array"}},
    }
)
class GraphField(ParsedJSONField):
    pass


class ForecastInputSerializer(ClosedInputSerializer):
    """One forecast; a field not listed here is refused (400)."""

    question = id_field("Question id.")
    session = SessionIdField(
        required=False, allow_null=True, help_text="Your replay session id (replay questions); null for live ones."
    )
    prediction = PredictionField(help_text="Shape depends on the question type; see the API description.")
    sources = SourcesField(
        required=False,
        default=list,  # type: ignore[arg-type]
        help_text="Cited sources: article ids or http(s) URLs (at most 200).",
    )
    rationale = RationaleField(required=False, default="", help_text="Free text.")  # type: ignore[arg-type]
    graph = GraphField(
        required=False,
        allow_null=True,
        default=None,
        help_text='Forecast graph {"events": [{id, title, description, date}], "edges": [{source, target, '
        "relation, strength, confidence}]}.",
    )
    idempotency_key = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="Retries with the same key are safe."
    )

    def check(self, data: Any) -> ForecastInput:
        """Validate one body; raises the same ValidationError as ``is_valid(raise_exception=True)``."""
        return self.to_input(self.run_validation(data))

    def to_input(self, validated: dict[str, Any] | None = None) -> ForecastInput:
        v = self.validated_data if validated is None else validated
        return ForecastInput(
            question_id=v["question"],
            session_id=v.get("session"),
            prediction=v["prediction"],
            sources=v.get("sources"),
            rationale=v.get("rationale"),
            graph=v.get("graph"),
            idempotency_key=v.get("idempotency_key", "").strip(),
        )


_checkers = threading.local()


def _input_checker() -> ForecastInputSerializer:
    """A reusable unbound input serializer per thread: building DRF fields per request costs more
    than validating the body, and ``run_validation`` keeps no state on the instance."""
    checker: ForecastInputSerializer | None = getattr(_checkers, "checker", None)
    if checker is None:
        checker = _checkers.checker = ForecastInputSerializer()
    return checker


class GradeOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Grade
        fields = [
            "version",
            "grader_version",
            "resolution_version",
            "reference_version",
            "void",
            "contaminated",
            "cutoff_declared",
            "counts",
            "correct",
            "brier",
            "log_score",
            "market_edge",
            "pinball",
            "first_level_f1",
            "second_level_f1",
            "kl_binary",
            "kl_quad",
            "open_precision",
            "open_recall",
            "open_f1",
            "judge",
            "source_precision",
            "source_recall",
            "leaks",
            "key_event_recall",
            "event_precision",
            "event_recall",
            "event_f1",
            "temporal_mae",
            "created_at",
        ]
        # Each score described by its one definition: what it measures, its range, which way is better.
        extra_kwargs = {name: {"help_text": GRADE_SCORES[name].description} for name in fields if name in GRADE_SCORES}


class ForecastOutputSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="question_id")
    session = serializers.UUIDField(source="session_id", allow_null=True)
    agent = serializers.CharField(source="agent.slug")
    grade = serializers.SerializerMethodField(help_text="The current grade once the outcome is public, else null.")
    grade_status = serializers.SerializerMethodField(
        help_text="graded | void | pending | unresolved | withheld until the outcome is published (replay)."
    )

    class Meta:
        model = Forecast
        fields = [
            "id",
            "question",
            "session",
            "agent",
            "received_at",
            "prediction",
            "sources",
            "rationale",
            "graph",
            "idempotency_key",
            "channel",
            "grade",
            "grade_status",
        ]

    @extend_schema_field(GradeOutputSerializer(allow_null=True))
    def get_grade(self, obj: Forecast) -> dict[str, Any] | None:
        grade = self.context.get("grades", {}).get(obj.pk)
        return None if grade is None else GradeOutputSerializer(grade).data  # type: ignore[return-value]

    def get_grade_status(self, obj: Forecast) -> str:
        return grade_status(forecast=obj, grade=self.context.get("grades", {}).get(obj.pk))


_received_at_field = serializers.DateTimeField()


def forecast_output(forecast: Forecast, grade: Grade | None = None) -> dict[str, Any]:
    """What ``ForecastOutputSerializer`` renders, built directly.

    The serializer stays the documented response schema (drf-spectacular reads it); building a
    ModelSerializer costs about as much CPU as the rest of a submission, so the write endpoints
    render this dict instead. tests/leaderboard/test_api_forecast_output.py keeps the two equal.
    """
    return {
        "id": forecast.pk,
        "question": forecast.question_id,
        "session": None if forecast.session_id is None else str(forecast.session_id),
        "agent": forecast.agent.slug,
        "received_at": _received_at_field.to_representation(forecast.received_at),
        "prediction": forecast.prediction,
        "sources": forecast.sources,
        "rationale": forecast.rationale,
        "graph": forecast.graph,
        "idempotency_key": forecast.idempotency_key,
        "channel": forecast.channel,
        "grade": None if grade is None else GradeOutputSerializer(grade).data,
        "grade_status": grade_status(forecast=forecast, grade=grade),
    }


@extend_schema_field({"type": "integer", "enum": [201, 200, 400, 404, 409]})
class BatchItemStatusField(serializers.IntegerField):
    pass


class BatchItemOutputSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0, help_text="The item's position in the request list, from 0.")
    status = BatchItemStatusField(
        help_text="What POST /api/v1/forecasts/ would have answered for this item alone: 201 created, 200 the "
        "original forecast of a repeated idempotency key, 400 an invalid item (e.g. a missing question or an "
        "unknown field), 404 an unknown question or session, 409 a question not taking forecasts or an "
        "idempotency key already used with another body."
    )
    forecast = ForecastOutputSerializer(allow_null=True, help_text="The forecast (status 200 or 201), else null.")
    error = ErrorSerializer(allow_null=True, help_text="The item's error (status 400, 404 or 409), else null.")


class BatchOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    replayed = serializers.IntegerField()
    failed = serializers.IntegerField()
    results = BatchItemOutputSerializer(many=True)


_ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="Invalid body; every invalid field is named at once. Besides what the schema says: the "
        "`prediction` must have the shape of the question's type (see the API description), probabilities "
        "must be finite and sum to 1, sources must be cited as ids or http(s) URLs, an unknown field is "
        "refused, and text may not hold a NUL character.",
    ),
    401: ErrorSerializer,
    404: ErrorSerializer,
    409: OpenApiResponse(
        ErrorSerializer,
        description="The question takes no forecast now (closed, not yet open, outcome published), or the "
        "idempotency key was already used for another forecast with a different body (the message names the "
        "key and that forecast's id).",
    ),
    413: ErrorSerializer,
    429: ErrorSerializer,
}


class ForecastListQuery(PageQuery):
    question = id_field("Only forecasts on this question.", required=False)
    session = SessionIdField(required=False, help_text="Only forecasts made in this replay session.")
    track = serializers.ChoiceField(choices=Question.Track.choices, required=False, allow_blank=True)


class ForecastListSubmitApi(APIView):
    permission_classes = [IsAgent]

    @extend_schema(
        operation_id="forecasts_list",
        parameters=[ForecastListQuery],
        responses={200: page_of(ForecastOutputSerializer, "ForecastPage"), 400: ErrorSerializer, 401: ErrorSerializer},
        summary="The calling agent's own forecasts, newest first",
    )
    def get(self, request: Request) -> Response:
        agent = request_agent(request)
        assert agent is not None
        query = ForecastListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = {k: query.validated_data[k] for k in ("question", "session", "track") if query.validated_data.get(k)}
        forecasts = forecast_list_for_agent(agent=agent, filters=filters).select_related("agent")
        return paginated(
            queryset=forecasts,
            serializer_class=ForecastOutputSerializer,
            request=request,
            view=self,
            context=lambda page: {"grades": forecast_current_grades(forecasts=page)},
        )

    @extend_schema(
        operation_id="forecasts_create",
        request=ForecastInputSerializer,
        responses={201: ForecastOutputSerializer, 200: ForecastOutputSerializer, **_ERRORS},
        summary="Submit one forecast (201; 200 and the original for a repeated idempotency key)",
    )
    def post(self, request: Request) -> Response:
        agent = request_agent(request)
        assert agent is not None
        item = _input_checker().check(request.data)
        try:
            result = forecast_submit(
                agent=agent,
                question_id=item.question_id,
                session_id=item.session_id,
                prediction=item.prediction,
                sources=item.sources,
                rationale=item.rationale,
                graph=item.graph,
                idempotency_key=item.idempotency_key,
                channel=Forecast.Channel.API,
            )
        except ServiceError as exc:
            raise api_exception(exc) from exc
        return Response(
            forecast_output(result.forecast),
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class ForecastBatchApi(APIView):
    permission_classes = [IsAgent]

    @extend_schema(
        operation_id="forecasts_batch",
        request=ForecastInputSerializer(many=True),
        responses={
            200: BatchOutputSerializer,
            400: ErrorSerializer,
            401: ErrorSerializer,
            413: ErrorSerializer,
            429: ErrorSerializer,
        },
        summary=f"Submit up to {MAX_BATCH_ITEMS} forecasts; each item answers on its own",
        description=(
            f"A JSON list of 1 to {MAX_BATCH_ITEMS} forecast bodies, each as POST /api/v1/forecasts/ takes it. "
            "The batch answers 200 whenever the list itself is acceptable: each item is checked and stored on its "
            "own, and its result (in request order) carries the status and body that POST /api/v1/forecasts/ "
            "would have answered for it alone, so an item that breaks the item schema (a missing `question`, an "
            "unknown field) is a result with status 400, not a refused batch. The whole request answers 400 only "
            f"when the body is not a list, is empty or holds more than {MAX_BATCH_ITEMS} items. Two items with "
            "the same idempotency key and the same body store one forecast; with different bodies the later one "
            "gets 409."
        ),
    )
    def post(self, request: Request) -> Response:
        agent = request_agent(request)
        assert agent is not None
        bodies = request.data
        if not isinstance(bodies, list):
            raise exceptions.ValidationError({"body": ["must be a JSON list of forecast bodies"]})
        if not bodies:
            raise exceptions.ValidationError({"body": ["the list is empty"]})
        if len(bodies) > MAX_BATCH_ITEMS:
            raise exceptions.ValidationError(
                {"body": [f"has {len(bodies)} forecasts; at most {MAX_BATCH_ITEMS} per batch"]}
            )
        rows: list[dict[str, Any]] = [{"index": i} for i in range(len(bodies))]
        inputs: list[ForecastInput] = []
        positions: list[int] = []
        checker = _input_checker()
        for i, body in enumerate(bodies):
            try:
                if not isinstance(body, dict):
                    raise exceptions.ValidationError({"body": ["each item must be a forecast object"]})
                inputs.append(checker.check(body))
                positions.append(i)
            except exceptions.ValidationError as exc:
                code, payload = error_body(exc)
                rows[i].update(status=code, forecast=None, error=payload)
        results = forecast_submit_batch(agent=agent, items=inputs, channel=Forecast.Channel.API) if inputs else []
        accepted = [(i, r) for i, r in zip(positions, results, strict=True) if isinstance(r, SubmitResult)]
        for i, result in accepted:
            rows[i].update(status=201 if result.created else 200, forecast=forecast_output(result.forecast), error=None)
        for i, outcome in zip(positions, results, strict=True):
            if not isinstance(outcome, SubmitResult):
                assert isinstance(outcome, NotFound | ForecastConflict | DjangoValidationError)
                code, payload = error_body(outcome)
                rows[i].update(status=code, forecast=None, error=payload)
        return Response(
            {
                "created": sum(1 for r in rows if r["status"] == 201),
                "replayed": sum(1 for r in rows if r["status"] == 200),
                "failed": sum(1 for r in rows if r["status"] >= 400),
                "results": rows,
            }
        )
