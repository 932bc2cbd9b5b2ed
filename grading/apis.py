"""GET /api/v1/questions/{id}/hindsight/: the public hindsight reference of a revealed question."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.selectors import hindsight_view, revealed_question


class _SourceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.URLField()
    published_at = serializers.DateTimeField(allow_null=True)


class _ImpactSerializer(serializers.Serializer):
    direction = serializers.CharField()
    magnitude = serializers.FloatField()
    confidence = serializers.FloatField()
    score = serializers.FloatField(help_text="magnitude x confidence")


class _EventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    date = serializers.DateField()
    type = serializers.CharField()
    is_outcome = serializers.BooleanField()
    review_status = serializers.CharField()
    rejected = serializers.BooleanField(help_text="Rejected by review: not part of the reference.")
    impact = _ImpactSerializer(allow_null=True)
    sources = _SourceSerializer(many=True)


class _LinkSerializer(serializers.Serializer):
    source = serializers.CharField()  # type: ignore[assignment]  # the JSON key; DRF pops declared fields
    target = serializers.CharField()
    relation = serializers.CharField()
    strength = serializers.FloatField()
    confidence = serializers.FloatField()
    reasoning = serializers.CharField()
    evidence = serializers.ListField(child=serializers.IntegerField())


class _QuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    type = serializers.CharField()
    track = serializers.CharField()
    resolution_criteria = serializers.CharField()
    open_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    outcome = serializers.JSONField()
    outcome_text = serializers.CharField()


class _GraphSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    builder = serializers.CharField()
    builder_label = serializers.CharField()
    offline = serializers.BooleanField(help_text="Built by the deterministic offline builder (no LLM).")
    builder_version = serializers.CharField()
    model_name = serializers.CharField()
    graph_built = serializers.BooleanField(help_text="Met the quality thresholds; otherwise not used for grading.")
    created_at = serializers.DateTimeField()
    quality = serializers.JSONField()


class _PressureSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    day = serializers.DateField()
    sign = serializers.IntegerField()
    contribution = serializers.FloatField()
    cumulative = serializers.FloatField()


class _PriceSerializer(serializers.Serializer):
    time = serializers.DateTimeField()
    probability = serializers.FloatField()


class HindsightOutputSerializer(serializers.Serializer):
    question = _QuestionSerializer()
    graph = _GraphSerializer()
    explanation = serializers.CharField()
    review = serializers.DictField(child=serializers.IntegerField())
    events = _EventSerializer(many=True)
    links = _LinkSerializer(many=True)
    pressure = _PressureSerializer(many=True)
    price_outcome = serializers.CharField()
    prices = _PriceSerializer(many=True)


class QuestionHindsightApi(APIView):
    """The hindsight graph, explanation and causal pressure of a question; 404 until revealed."""

    @extend_schema(responses={200: HindsightOutputSerializer}, operation_id="question_hindsight")
    def get(self, request: Request, question_id: int) -> Response:
        question = revealed_question(question_id)
        view = hindsight_view(question) if question is not None else None
        if view is None:
            raise exceptions.NotFound(
                "No public hindsight graph for this question (unknown, not revealed or not built)."
            )
        data = {
            "question": view.question,
            "graph": view.graph,
            "explanation": view.explanation,
            "review": view.review,
            "events": view.events,
            "links": view.links,
            "pressure": view.pressure,
            "price_outcome": view.price_outcome,
            "prices": [{"time": t, "probability": p} for t, p in view.prices],
        }
        return Response(HindsightOutputSerializer(data).data)
