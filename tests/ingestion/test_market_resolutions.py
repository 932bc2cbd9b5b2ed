"""A market's answer resolves its question through versioned resolutions: Polymarket settled at 1
or 50/50, Manifold YES/NO/MKT/CANCEL and answers, Kalshi determined -> settled, amended and
un-resolved. Every change adds a version and announces it; re-polling adds nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ingestion.models import Question, Resolution, Source
from ingestion.services.questions import question_resolve
from ingestion.signals import resolution_changed
from tests.ingestion.conftest import NOW
from tests.ingestion.market_fakes import FakeKalshi, FakeManifold, FakePolymarket, market_source, poll

pytestmark = pytest.mark.django_db

LATER = NOW + timedelta(days=1)


def versions(question: Question) -> list[tuple[str, object, bool]]:
    return [(r.kind, r.outcome, r.provisional) for r in question.resolutions.order_by("version")]


def question_for(external_id: str) -> Question:
    return Question.objects.get(market__external_id=external_id)


# Polymarket


@pytest.fixture
def gamma(fake_server) -> FakePolymarket:
    return FakePolymarket.install(fake_server)


@pytest.fixture
def gamma_source(gamma, fake_server) -> Source:
    source = market_source(fake_server, Source.Kind.POLYMARKET, open_questions=True, price_history=False)
    assert poll(source, NOW).error == ""
    return source


def test_polymarket_closed_with_a_winner_resolves(gamma, gamma_source) -> None:
    gamma.set("512340", closed=True, outcomePrices='["1", "0"]', closedTime="2026-04-29 18:30:00+00")
    report = poll(gamma_source, LATER)
    assert report.error == ""
    question = question_for("512340")
    assert question.status == Question.Status.RESOLVED
    resolution = question.resolutions.get()
    assert (resolution.kind, resolution.outcome, resolution.provisional) == ("resolve", True, False)
    assert resolution.resolved_at == datetime(2026, 4, 29, 18, 30, tzinfo=UTC)
    assert resolution.author_label == "market:polymarket"
    assert resolution.evidence["market_id"] == "512340"
    # Resolved markets leave the closed=false listing; the question's market is fetched by id.
    assert poll(gamma_source, LATER + timedelta(hours=1)).added == 0
    assert question.resolutions.count() == 1


def test_polymarket_multiple_choice_resolves_to_the_winner(gamma, gamma_source) -> None:
    gamma.set("512402", closed=True, outcomePrices='["0", "0", "0.995", "0.005"]')
    assert poll(gamma_source, LATER).error == ""
    assert versions(question_for("512402")) == [("resolve", "Italy", False)]


def test_polymarket_fifty_fifty_annuls(gamma, gamma_source) -> None:
    gamma.set("512340", closed=True, outcomePrices='["0.5", "0.5"]')
    assert poll(gamma_source, LATER).error == ""
    question = question_for("512340")
    assert question.status == Question.Status.ANNULLED
    annul = question.resolutions.get()
    assert annul.kind == Resolution.Kind.ANNUL
    assert "50/50" in annul.note


def test_polymarket_closed_awaiting_settlement_waits(gamma, gamma_source) -> None:
    gamma.set("512340", closed=True, outcomePrices='["0.62", "0.38"]')
    assert poll(gamma_source, LATER).error == ""
    assert question_for("512340").resolutions.count() == 0


# Manifold


@pytest.fixture
def manifold(fake_server) -> FakeManifold:
    return FakeManifold.install(fake_server)


@pytest.fixture
def manifold_source(manifold, fake_server) -> Source:
    source = market_source(fake_server, Source.Kind.MANIFOLD, open_questions=True, price_history=False)
    assert poll(source, NOW).error == ""
    return source


def test_manifold_yes_then_unresolved_then_no(manifold, manifold_source) -> None:
    gpt6 = "qZ8rT2mLkP"
    manifold.set(gpt6, isResolved=True, resolution="YES", resolutionTime=1772800000000)
    assert poll(manifold_source, LATER).error == ""
    question = question_for(gpt6)
    assert versions(question) == [("resolve", True, False)]
    assert question.resolutions.get().resolved_at == datetime.fromtimestamp(1772800000, tz=UTC)

    manifold.set(gpt6, isResolved=False, resolution=None, resolutionTime=None)
    assert poll(manifold_source, LATER + timedelta(hours=1)).error == ""
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN
    assert versions(question)[-1] == ("unresolve", None, False)

    manifold.set(gpt6, isResolved=True, resolution="NO", resolutionTime=1772900000000)
    assert poll(manifold_source, LATER + timedelta(hours=2)).error == ""
    assert versions(question) == [("resolve", True, False), ("unresolve", None, False), ("resolve", False, False)]
    assert poll(manifold_source, LATER + timedelta(hours=3)).added == 0


@pytest.mark.parametrize(
    ("resolution", "reason"),
    [("MKT", "Manifold resolved the market to MKT at probability 0.37"), ("CANCEL", "cancelled the market")],
)
def test_manifold_mkt_and_cancel_annul_with_the_reason(manifold, manifold_source, resolution, reason) -> None:
    manifold.set("qZ8rT2mLkP", isResolved=True, resolution=resolution, resolutionProbability=0.37)
    assert poll(manifold_source, LATER).error == ""
    question = question_for("qZ8rT2mLkP")
    assert question.status == Question.Status.ANNULLED
    annul = question.resolutions.get()
    assert annul.kind == Resolution.Kind.ANNUL and reason in annul.note


def test_manifold_multiple_choice_resolves_to_the_answer(manifold, manifold_source) -> None:
    manifold.set("mC4nW9xQe1", isResolved=True, resolution="ans1Celtics", resolutionTime=1777600000000)
    assert poll(manifold_source, LATER).error == ""
    assert versions(question_for("mC4nW9xQe1")) == [("resolve", "Boston Celtics", False)]


# Kalshi

FED = "KXFEDDECISION-26APR-C25"


@pytest.fixture
def kalshi(fake_server) -> FakeKalshi:
    return FakeKalshi.install(fake_server)


@pytest.fixture
def kalshi_source(kalshi, fake_server) -> Source:
    source = market_source(fake_server, Source.Kind.KALSHI, open_questions=True)
    assert poll(source, NOW).error == ""
    return source


def test_kalshi_determined_is_provisional_then_settled_is_final(kalshi, kalshi_source, fake_server) -> None:
    kalshi.set(FED, status="determined", result="yes")
    assert poll(kalshi_source, LATER).error == ""
    # No longer listed under status=open: fetched by ticker.
    assert fake_server.requests_to(f"/trade-api/v2/markets/{FED}")
    question = question_for(FED)
    assert versions(question) == [("resolve", True, True)]
    assert poll(kalshi_source, LATER + timedelta(hours=1)).added == 0

    kalshi.set(FED, status="settled", settlement_ts="2026-04-29T18:10:00Z")
    assert poll(kalshi_source, LATER + timedelta(hours=2)).error == ""
    assert versions(question) == [("resolve", True, True), ("amend", True, False)]
    assert question.current_resolution.resolved_at == datetime(2026, 4, 29, 18, 10, tzinfo=UTC)
    assert poll(kalshi_source, LATER + timedelta(hours=3)).added == 0


def test_kalshi_disputed_then_amended_then_settled(kalshi, kalshi_source) -> None:
    kalshi.set(FED, status="determined", result="yes")
    poll(kalshi_source, LATER)
    kalshi.set(FED, status="disputed")
    assert poll(kalshi_source, LATER + timedelta(hours=1)).added == 0
    kalshi.set(FED, status="amended", result="no")
    assert poll(kalshi_source, LATER + timedelta(hours=2)).error == ""
    kalshi.set(FED, status="finalized")
    assert poll(kalshi_source, LATER + timedelta(hours=3)).error == ""
    question = question_for(FED)
    assert versions(question) == [("resolve", True, True), ("amend", False, True), ("amend", False, False)]
    assert question.status == Question.Status.RESOLVED


def test_kalshi_market_that_unresolves_adds_a_version(kalshi, kalshi_source) -> None:
    kalshi.set(FED, status="determined", result="no")
    poll(kalshi_source, LATER)
    kalshi.set(FED, status="active", result="")
    assert poll(kalshi_source, LATER + timedelta(hours=1)).error == ""
    question = question_for(FED)
    assert versions(question) == [("resolve", False, True), ("unresolve", None, False)]
    assert question.status == Question.Status.OPEN


def test_a_staff_resolution_is_not_withdrawn_by_an_open_market(kalshi, kalshi_source) -> None:
    question = question_for(FED)
    question_resolve(question=question, outcome=True, author_label="staff", now=LATER)
    assert poll(kalshi_source, LATER + timedelta(hours=1)).added == 0
    assert versions(question) == [("resolve", True, False)]


def test_draft_questions_do_not_follow_the_market(kalshi, fake_server) -> None:
    source = market_source(fake_server, Source.Kind.KALSHI)
    poll(source, NOW)
    kalshi.set(FED, status="settled", result="yes")
    assert poll(source, LATER).error == ""
    question = question_for(FED)
    assert question.status == Question.Status.DRAFT and question.resolutions.count() == 0


def test_every_version_is_announced(kalshi, kalshi_source, django_capture_on_commit_callbacks) -> None:
    heard: list[dict] = []

    def receiver(sender, **kwargs):
        heard.append(kwargs)

    resolution_changed.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            kalshi.set(FED, status="determined", result="yes")
            poll(kalshi_source, LATER)
            kalshi.set(FED, status="settled")
            poll(kalshi_source, LATER + timedelta(hours=1))
    finally:
        resolution_changed.disconnect(receiver)
    question = question_for(FED)
    assert [(h["question_id"], h["version"], h["kind"]) for h in heard] == [
        (question.pk, 1, "resolve"),
        (question.pk, 2, "amend"),
    ]
