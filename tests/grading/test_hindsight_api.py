"""GET /api/v1/questions/{id}/hindsight/ and the public hindsight page: hidden until revealed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from grading.review_services import event_review
from grading.services import hindsight_build
from ingestion.models import Market, PricePoint, Question
from ingestion.services.questions import question_publish_outcome
from tests.grading.corpus import T0, make_corpus, make_question, resolve

pytestmark = pytest.mark.django_db(transaction=True)


def built(track: str = Question.Track.LIVE) -> Question:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="artemis", title="Artemis budget")
    for day, p in ((0, 0.4), (20, 0.55), (45, 0.7), (58, 0.93)):
        PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=day), probability=p)
        PricePoint.objects.create(market=market, outcome="No", time=T0 + timedelta(days=day), probability=1 - p)
    question = make_question(track=track, market=market)
    make_corpus()
    resolve(question)
    assert hindsight_build(question_id=question.pk, builder="offline") is not None
    return question


def test_replay_question_is_hidden_until_published(http: httpx.Client) -> None:
    question = built(track=Question.Track.REPLAY)
    assert http.get(f"/api/v1/questions/{question.pk}/hindsight/").status_code == 404
    assert http.get(f"/hindsight/questions/{question.pk}/").status_code == 404
    question_publish_outcome(question=question)
    response = http.get(f"/api/v1/questions/{question.pk}/hindsight/")
    assert response.status_code == 200
    assert http.get(f"/hindsight/questions/{question.pk}/").status_code == 200


def test_json_after_resolution_of_a_live_question(http: httpx.Client, staff: Any) -> None:
    question = built()
    graph = question.hindsight_graphs.get(is_current=True)
    rejected = graph.events.filter(is_outcome=False).order_by("occurred_on", "id").first()
    event_review(event=rejected, reviewer=staff, decision="reject", reason="Noise")
    data = http.get(f"/api/v1/questions/{question.pk}/hindsight/").json()
    assert data["question"]["outcome_text"] == "Yes" and data["question"]["id"] == question.pk
    assert data["graph"]["builder"] == "offline" and data["graph"]["offline"] is True
    assert data["graph"]["builder_label"].startswith("Offline-built") and data["graph"]["graph_built"] is True
    assert "Offline-built" in data["explanation"]
    events = data["events"]
    assert [e["date"] for e in events] == sorted(e["date"] for e in events)
    assert sum(e["is_outcome"] for e in events) == 1
    scored = next(e for e in events if e["impact"])
    assert scored["impact"]["score"] == pytest.approx(
        scored["impact"]["magnitude"] * scored["impact"]["confidence"], abs=1e-4
    )
    assert scored["sources"][0]["url"].startswith("https://")
    assert data["review"]["Rejected"] == 1
    assert next(e for e in events if e["id"] == rejected.pk)["rejected"] is True
    # Pressure: cumulative sum of d*m*c over non-rejected events with impacts, in date order.
    pressure = data["pressure"]
    assert rejected.key not in {p["key"] for p in pressure}
    total = 0.0
    for point in pressure:
        total += point["contribution"]
        assert point["cumulative"] == pytest.approx(total, abs=1e-3)
    assert pressure[-1]["cumulative"] > 0  # the Yes storyline pushes up
    assert data["price_outcome"] == "Yes" and [p["probability"] for p in data["prices"]] == [0.4, 0.55, 0.7, 0.93]
    assert data["links"] and {"source", "target", "relation", "strength", "confidence"} <= set(data["links"][0])


def test_public_page_has_chart_with_text_alternative(http: httpx.Client) -> None:
    question = built()
    html = http.get(f"/hindsight/questions/{question.pk}/").text
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="pressure-chart" role="img"' in html
    assert 'aria-describedby="pressure-caption"' in html and 'id="pressure-caption"' in html
    assert 'class="price-line"' in html and 'class="pressure-step"' in html and html.count('class="event-dot"') >= 10
    assert "pressure-table" in html and "Offline-built" in html


def test_unknown_or_unbuilt_questions_are_404(http: httpx.Client) -> None:
    assert http.get("/api/v1/questions/999999/hindsight/").status_code == 404
    question = make_question()
    resolve(question)
    response = http.get(f"/api/v1/questions/{question.pk}/hindsight/")
    assert response.status_code == 404
