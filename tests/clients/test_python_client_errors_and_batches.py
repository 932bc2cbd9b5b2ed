"""The client raises the API's errors as typed exceptions (status, code, message, every invalid
field) and submits batches whose items succeed or fail on their own, split at the server's limit."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_client import Client, ForecastBody, InvalidRequest, Unauthorized
from hindsight_client import client as client_module
from leaderboard.models import ApiToken, Forecast
from leaderboard.services.teams import token_revoke
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


def test_errors_carry_the_api_code_message_and_fields(live_server: Any, agent_key: str) -> None:
    question = live_question("binary")
    with Client(live_server.url, agent_key) as hs:
        with pytest.raises(InvalidRequest) as invalid:
            hs.submit_forecast(question.pk, {"probability": 2}, sources=["ftp://nowhere"])
        error = invalid.value
        assert (error.status, error.code) == (400, "invalid")
        assert {e.field for e in error.errors} == {"prediction.probability", "sources[0]"}
        assert all(e.field in error.message for e in error.errors)
        token_revoke(token=ApiToken.objects.get())
        with pytest.raises(Unauthorized) as revoked:
            list(hs.forecasts())
        assert (revoked.value.status, revoked.value.code) == (401, "authentication_failed")
    assert not Forecast.objects.exists()
    with pytest.raises(ValueError, match="HINDSIGHT_TOKEN"):
        Client(live_server.url, token="")


def test_batches_answer_per_item_and_split_long_lists(
    live_server: Any, agent_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions = [live_question("binary") for _ in range(3)]
    monkeypatch.setattr(client_module, "BATCH_LIMIT", 2)
    bodies: list[ForecastBody | dict[str, Any]] = [
        ForecastBody(question=questions[0].pk, prediction={"probability": 0.1}, idempotency_key="b-0"),
        {"question": questions[1].pk, "prediction": {"probability": 1.7}},
        ForecastBody(question=questions[2].pk, prediction={"probability": 0.3}, idempotency_key="b-2"),
        ForecastBody(question=questions[0].pk, prediction={"probability": 0.1}, idempotency_key="b-0"),
        {"question": 999999, "prediction": {"probability": 0.5}},
    ]
    with Client(live_server.url, agent_key) as hs:
        result = hs.submit_forecasts(bodies)
    assert (result.created, result.replayed, result.failed) == (2, 1, 2)
    assert [(item.index, item.status) for item in result.results] == [(0, 201), (1, 400), (2, 201), (3, 200), (4, 404)]
    first, invalid, _, replayed, missing = result.results
    assert first.forecast is not None and replayed.forecast is not None and first.forecast.id == replayed.forecast.id
    assert isinstance(invalid.error, InvalidRequest) and invalid.error.errors[0].field == "prediction.probability"
    assert missing.error is not None and (missing.error.status, missing.error.code) == (404, "not_found")
    assert Forecast.objects.count() == 2
