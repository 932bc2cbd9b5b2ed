"""GET /api/v1/questions/ and /api/v1/questions/{id}/ (public; drafts are never listed)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.models import Question
from ingestion.question_data import QUESTION_FIELDS as QUESTION_DATA_FIELDS
from leaderboard.apis.common import ErrorSerializer, PageQuery, page_of, paginated
from leaderboard.selectors.questions import question_get, question_list, question_resolutions_visible

QUESTION_FIELDS = ["id", *QUESTION_DATA_FIELDS, "outcome_published_at"]


class QuestionOutputSerializer(serializers.ModelSerializer):
    # An annulled replay question reads "resolved" until its outcome is published (Question.public_status).
    status = serializers.ChoiceField(choices=Question.Status.choices, source="public_status", read_only=True)
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


class QuestionListQuery(PageQuery):
    status = serializers.ChoiceField(
        choices=Question.Status.choices, required=False, allow_blank=True, help_text="Lifecycle status."
    )
    track = serializers.ChoiceField(
        choices=Question.Track.choices, required=False, allow_blank=True, help_text="live or replay."
    )
    type = serializers.ChoiceField(
        choices=Question.Type.choices, required=False, allow_blank=True, help_text="Question type."
    )
    domain = serializers.CharField(
        required=False, allow_blank=True, max_length=100, help_text="Domain, case-insensitive."
    )
    # Repeatable (origin=sample&origin=admin): e.g. the questions that have an evidence corpus.
    origin = serializers.MultipleChoiceField(
        choices=Question.Origin.choices, required=False, allow_blank=True, help_text="Origin; repeat for several."
    )

    def filters(self) -> dict[str, Any]:
        """The validated filters for ``question_list`` (an empty value filters nothing)."""
        data = self.validated_data
        filters: dict[str, Any] = {k: data[k] for k in ("status", "track", "type", "domain") if data.get(k)}
        origins = sorted(origin for origin in data.get("origin", ()) if origin)
        if origins:
            filters["origin"] = origins
        return filters


class QuestionListApi(APIView):
    @extend_schema(
        operation_id="questions_list",
        parameters=[QuestionListQuery],
        responses={200: page_of(QuestionOutputSerializer, "QuestionPage"), 400: ErrorSerializer},
        summary="List questions (drafts are never listed)",
    )
    def get(self, request: Request) -> Response:
        query = QuestionListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        questions = question_list(filters=query.filters(), user=request.user)
        return paginated(queryset=questions, serializer_class=QuestionOutputSerializer, request=request, view=self)


class QuestionDetailApi(APIView):
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
