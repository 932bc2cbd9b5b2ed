"""GET /api/v1/questions/ and /api/v1/questions/{id}/ (public; drafts are never listed)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.models import Question
from ingestion.question_data import QUESTION_FIELDS as QUESTION_DATA_FIELDS
from leaderboard.apis.common import ErrorSerializer, paginated
from leaderboard.selectors.questions import question_get, question_list, question_resolutions_visible
from leaderboard.throttling import TokenRateThrottle

QUESTION_FIELDS = ["id", *QUESTION_DATA_FIELDS, "outcome_published_at"]


class QuestionOutputSerializer(serializers.ModelSerializer):
    outcome_revealed = serializers.SerializerMethodField(help_text="Whether the outcome is public.")

    class Meta:
        model = Question
        fields = [*QUESTION_FIELDS, "outcome_revealed"]

    def get_outcome_revealed(self, obj: Question) -> bool:
        return obj.is_revealed


class ResolutionOutputSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    kind = serializers.CharField()
    outcome = serializers.JSONField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    provisional = serializers.BooleanField()
    note = serializers.CharField()
    author = serializers.CharField(source="author_label")
    created_at = serializers.DateTimeField()


class QuestionDetailOutputSerializer(QuestionOutputSerializer):
    resolutions = serializers.SerializerMethodField(
        help_text="Resolution history, oldest first; empty until the outcome is revealed."
    )
    outcome = serializers.SerializerMethodField(help_text="The current outcome once revealed, else null.")

    class Meta(QuestionOutputSerializer.Meta):
        fields = [*QuestionOutputSerializer.Meta.fields, "outcome", "resolutions"]

    def _visible(self, obj: Question) -> list[Any]:
        cache: dict[int, list[Any]] = self.__dict__.setdefault("_resolutions", {})
        if obj.pk not in cache:
            cache[obj.pk] = question_resolutions_visible(question=obj, user=self.context["request"].user)
        return cache[obj.pk]

    @extend_schema_field(ResolutionOutputSerializer(many=True))
    def get_resolutions(self, obj: Question) -> list[dict[str, Any]]:
        return ResolutionOutputSerializer(self._visible(obj), many=True).data  # type: ignore[return-value]

    @extend_schema_field(OpenApiTypes.ANY)
    def get_outcome(self, obj: Question) -> Any:
        visible = self._visible(obj)
        if not visible or obj.status != Question.Status.RESOLVED:
            return None
        return visible[-1].outcome


_FILTER_PARAMETERS = [
    OpenApiParameter("status", str, enum=Question.Status.values, description="Lifecycle status."),
    OpenApiParameter("track", str, enum=Question.Track.values, description="live or replay."),
    OpenApiParameter("type", str, enum=Question.Type.values, description="Question type."),
    OpenApiParameter("domain", str, description="Domain, case-insensitive."),
    OpenApiParameter("limit", int, description="Page size (default 50)."),
    OpenApiParameter("offset", int, description="Items to skip."),
]


class QuestionListApi(APIView):
    throttle_classes = [TokenRateThrottle]

    @extend_schema(
        operation_id="questions_list",
        parameters=_FILTER_PARAMETERS,
        responses={200: QuestionOutputSerializer(many=True), 400: ErrorSerializer},
        summary="List questions (drafts are never listed)",
    )
    def get(self, request: Request) -> Response:
        questions = question_list(filters=request.query_params, user=request.user)
        return paginated(queryset=questions, serializer_class=QuestionOutputSerializer, request=request, view=self)


class QuestionDetailApi(APIView):
    throttle_classes = [TokenRateThrottle]

    @extend_schema(
        operation_id="questions_retrieve",
        responses={200: QuestionDetailOutputSerializer, 404: ErrorSerializer},
        summary="One question; its outcome and resolution history once revealed",
    )
    def get(self, request: Request, question_id: int) -> Response:
        question = question_get(question_id=question_id, user=request.user)
        if question is None:
            raise exceptions.NotFound(f"question {question_id} does not exist", code="not_found")
        return Response(QuestionDetailOutputSerializer(question, context={"request": request}).data)
