"""POST /api/v1/replays/: open (or fetch) the calling agent's replay session on a question;
DELETE /api/v1/replays/{id}/: close it."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.apis.common import ClosedInputSerializer, ErrorSerializer, IsAgent, api_exception, id_field
from leaderboard.authentication import request_agent
from leaderboard.models import ReplaySession
from leaderboard.services.errors import ServiceError
from leaderboard.services.replay_sessions import replay_session_close, replay_session_open


class ReplayInputSerializer(ClosedInputSerializer):
    """The replay question to open (or get) your session on; a field not listed here is refused (400)."""

    question = id_field("Id of a replay-track question.")


class ReplayOutputSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="question_id")
    agent = serializers.CharField(source="agent.slug")
    simulated_date = serializers.DateTimeField(
        source="simulated_at",
        help_text="t_sim: evidence is answered strictly before this instant; it never changes.",
    )

    class Meta:
        model = ReplaySession
        fields = ["id", "question", "agent", "simulated_date", "created_at", "closed_at"]


class ReplayOpenApi(APIView):
    permission_classes = [IsAgent]

    @extend_schema(
        operation_id="replays_open",
        request=ReplayInputSerializer,
        responses={
            201: ReplayOutputSerializer,
            200: ReplayOutputSerializer,
            400: ErrorSerializer,
            401: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            429: ErrorSerializer,
        },
        summary="Open a replay session (201 the first time, 200 with the same session afterwards)",
    )
    def post(self, request: Request) -> Response:
        data = ReplayInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        assert agent is not None
        try:
            session, created = replay_session_open(agent=agent, question_id=data.validated_data["question"])
        except ServiceError as exc:
            raise api_exception(exc) from exc
        return Response(
            ReplayOutputSerializer(session).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class ReplayCloseApi(APIView):
    permission_classes = [IsAgent]

    @extend_schema(
        operation_id="replays_close",
        responses={200: ReplayOutputSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
        summary="Close your replay session: it takes no more forecasts (those made stand); closing twice is a no-op",
    )
    def delete(self, request: Request, session_id: uuid.UUID) -> Response:
        agent = request_agent(request)
        assert agent is not None
        try:
            session = replay_session_close(agent=agent, session_id=session_id)
        except ServiceError as exc:
            raise api_exception(exc) from exc
        return Response(ReplayOutputSerializer(session).data)
