"""/api/v1/deliveries/: an agent asks for a question to be delivered to its endpoint, and reads its log."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from endpoints.models import Delivery, DeliveryAttempt
from endpoints.selectors import delivery_log_for_agent
from endpoints.services.deliveries import delivery_request
from endpoints.tasks import dispatch_deliveries
from leaderboard.apis.common import (
    ClosedInputSerializer,
    ErrorSerializer,
    IsAgent,
    PageQuery,
    api_exception,
    id_field,
    page_of,
    paginated,
)
from leaderboard.authentication import request_agent
from leaderboard.services.errors import ServiceError


class DeliveryInputSerializer(ClosedInputSerializer):
    """The question to deliver to your endpoint; a field not listed here is refused (400)."""

    question = id_field("A live question taking forecasts, or a replay one.")


class DeliveryAttemptOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = DeliveryAttempt
        fields = ["number", "started_at", "latency_ms", "status_code", "outcome", "error"]


class DeliveryOutputSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="question_id")
    session = serializers.UUIDField(source="session_id", allow_null=True)
    forecast = serializers.IntegerField(source="forecast_id", allow_null=True)
    attempt_log = DeliveryAttemptOutputSerializer(many=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "question",
            "session",
            "trigger",
            "status",
            "attempts",
            "next_attempt_at",
            "created_at",
            "finished_at",
            "last_error",
            "forecast",
            "attempt_log",
        ]


class DeliveryListRequestApi(APIView):
    permission_classes = [IsAgent]

    @extend_schema(
        operation_id="deliveries_list",
        parameters=[PageQuery],
        responses={200: page_of(DeliveryOutputSerializer, "DeliveryPage"), 401: ErrorSerializer},
        summary="Your agent's deliveries (questions sent to its endpoint), newest first, with every attempt",
    )
    def get(self, request: Request) -> Response:
        agent = request_agent(request)
        assert agent is not None
        return paginated(
            queryset=delivery_log_for_agent(agent=agent),
            serializer_class=DeliveryOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        operation_id="deliveries_request",
        request=DeliveryInputSerializer,
        responses={
            202: DeliveryOutputSerializer,
            200: DeliveryOutputSerializer,
            400: ErrorSerializer,
            401: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            429: ErrorSerializer,
        },
        summary="Deliver a question to your endpoint (202 queued; 200 with the delivery already waiting)",
    )
    def post(self, request: Request) -> Response:
        data = DeliveryInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        assert agent is not None
        try:
            delivery, created = delivery_request(agent=agent, question_id=data.validated_data["question"])
        except ServiceError as exc:
            raise api_exception(exc) from exc
        if created:
            dispatch_deliveries([delivery.pk])
        return Response(
            DeliveryOutputSerializer(delivery).data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        )
