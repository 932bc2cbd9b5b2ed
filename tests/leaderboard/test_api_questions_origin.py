"""GET /api/v1/questions/?origin=…: an agent can ask for the questions that have an evidence corpus
(the sample world's, staff's, markets') and leave out an imported question set."""

from __future__ import annotations

import httpx
import pytest

from ingestion.models import Question
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


def test_origin_filter_takes_one_or_several_origins(http: httpx.Client) -> None:
    sample = live_question(origin=Question.Origin.SAMPLE)
    admin = live_question(origin=Question.Origin.ADMIN)
    live_question(origin=Question.Origin.IMPORTED)

    def ids(params: list[tuple[str, str]]) -> set[int]:
        response = http.get("/api/v1/questions/", params=params)
        assert response.status_code == 200, response.text
        return {q["id"] for q in response.json()["results"]}

    assert ids([("origin", "sample")]) == {sample.pk}
    assert ids([("origin", "sample"), ("origin", "admin")]) == {sample.pk, admin.pk}
    bad = http.get("/api/v1/questions/", params={"origin": "rumour"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "origin"
