"""Questions from news against a local OpenAI-compatible server: valid and malformed answers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import Article, NewsCluster, Question
from ingestion.services.question_generation import (
    cluster_texts,
    generation_status,
    questions_generate_from_news,
    recent_clusters,
)
from ingestion.tasks import generate_questions_from_news
from tests.factories import ArticleFactory
from tests.ingestion.fake_llm import FakeLLM, Reply, fake_llm

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

ELECTION = [
    (
        "Ruritania calls snap parliamentary election as coalition collapses",
        "The Ruritania coalition government collapsed and the prime minister called a snap parliamentary election.",
    ),
    (
        "Ruritania snap election: coalition parties trade blame",
        "Parties of the collapsed Ruritania coalition blame each other ahead of the snap parliamentary election.",
    ),
    (
        "Polls ahead of Ruritania snap parliamentary election",
        "Opinion polls for the Ruritania snap parliamentary election show the coalition parties losing seats.",
    ),
]
DROUGHT = [
    (
        "Lake Mead reservoir drought hits record low water level",
        "Drought pushed Lake Mead reservoir water level to a record low this week.",
    ),
    (
        "Drought: Lake Mead water level keeps falling",
        "The Lake Mead reservoir water level keeps falling as the drought continues.",
    ),
]
NOISE = [("Local bakery wins pastry award", "A small bakery in the old town won a national pastry award.")]


@pytest.fixture
def articles() -> dict[str, list[Article]]:
    made: dict[str, list[Article]] = {}
    for name, items in (("election", ELECTION), ("drought", DROUGHT), ("noise", NOISE)):
        made[name] = [
            ArticleFactory(title=t, summary=s, published_at=NOW - timedelta(hours=3 + i))
            for i, (t, s) in enumerate(items)
        ]
    # Too old for the window: never part of a cluster.
    ArticleFactory(title=ELECTION[0][0], summary=ELECTION[0][1], published_at=NOW - timedelta(days=10))
    # Undated: never evidence, never provenance.
    ArticleFactory(title=ELECTION[1][0], summary=ELECTION[1][1], published_at=None)
    return made


@pytest.fixture
def llm_settings(settings: Any) -> Callable[[FakeLLM], None]:
    def point(fake: FakeLLM, timeout: float = 5.0) -> None:
        settings.LLM_BASE_URL = fake.base_url
        settings.LLM_MODEL = "local-test-model"
        settings.LLM_API_KEY = "sk-local"
        settings.LLM_TIMEOUT_SECONDS = timeout
        # The fake answers in plain content; tests of the other methods set their own.
        settings.LLM_STRUCTURED_OUTPUT = "text"

    return point


def prompt_text(request: dict[str, Any]) -> str:
    """The prompt as sent: instructions are folded into the first user turn."""
    return str(request["messages"][0]["content"])


def prompt_ids(request: dict[str, Any]) -> list[int]:
    return [int(m) for m in re.findall(r"^\[(\d+)\]", prompt_text(request), re.MULTILINE)]


def question(ids: list[int], **overrides: Any) -> dict[str, Any]:
    item = {
        "title": "Will the governing coalition parties together win a majority in the Ruritania election?",
        "type": "binary",
        "answer_format": "Yes or No",
        "domain": "Politics",
        "resolution_criteria": "Resolves Yes if official results give the former coalition parties over half the seats.",
        "background": "The coalition collapsed this week.",
        "resolve_by": "2026-09-30",
        "provenance": ids[:2],
    }
    item.update(overrides)
    return item


def good_scores(score: float = 0.8) -> str:
    return json.dumps(
        {
            c: {"score": score, "reason": f"{c} looks fine"}
            for c in ("clarity", "measurability", "answerability", "temporal_validity")
        }
    )


def responder(
    generate: Callable[[dict[str, Any], list[int]], Reply], score: Callable[[dict[str, Any]], Reply] | None = None
) -> Callable[[dict[str, Any]], Reply]:
    def respond(request: dict[str, Any]) -> Reply:
        if "You write forecasting questions" in request["messages"][0]["content"]:
            return generate(request, prompt_ids(request))
        return score(request) if score else Reply(good_scores())

    return respond


def is_election(request: dict[str, Any]) -> bool:
    return "Ruritania" in prompt_text(request)


def test_clusters_are_deterministic_and_topical() -> None:
    docs = {i + 1: f"{t}\n{s}" for i, (t, s) in enumerate(ELECTION + DROUGHT + NOISE)}
    clusters = cluster_texts(docs, threshold=0.3)
    assert [c.article_ids for c in clusters] == [(1, 2, 3), (4, 5)]
    assert "ruritania" in clusters[0].terms and "drought" in clusters[1].terms
    shuffled = dict(reversed(list(docs.items())))
    assert [c.key for c in cluster_texts(shuffled, threshold=0.3)] == [c.key for c in clusters]
    assert cluster_texts(docs, threshold=0.99) == []


def test_without_llm_the_task_does_nothing(settings: Any, articles: Any) -> None:
    settings.LLM_MODEL = ""
    result = generate_questions_from_news()
    assert result["skipped_reason"] == "no LLM configured (set HINDSIGHT_LLM_MODEL)"
    assert not NewsCluster.objects.exists()
    assert not Question.objects.exists()
    assert generation_status() == {
        "enabled": False,
        "model": "",
        "text": "Question generation: off (no LLM configured)",
    }


def test_valid_answers_land_as_scored_drafts(articles: Any, llm_settings: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if is_election(request):
            mc = question(
                ids,
                title="Which party will win the most seats in the Ruritania snap election?",
                type="multiple_choice",
                options=["Unity", "Progress", "Another party"],
                answer_format="One of the options",
                provenance=ids,
            )
            return Reply("```json\n" + json.dumps({"questions": [question(ids), mc]}) + "\n```")
        quantity = question(
            ids,
            title="What will Lake Mead's water level be on 30 September 2026?",
            type="quantity",
            unit="feet",
            answer_format="A number in feet above sea level",
            domain="Climate",
            provenance=ids,
        )
        return Reply(json.dumps({"questions": [quantity]}))

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        report = questions_generate_from_news(now=NOW)
        assert report.clusters_found == 2 and report.clusters_processed == 2
        assert report.questions_created == 3
        assert report.problems == []
        drafts = Question.objects.filter(origin=Question.Origin.NEWS)
        assert drafts.count() == 3
        assert set(drafts.values_list("status", flat=True)) == {Question.Status.DRAFT}
        election_ids = {a.pk for a in articles["election"]}
        mc = drafts.get(type=Question.Type.MULTIPLE_CHOICE)
        assert mc.options == ["Unity", "Progress", "Another party"]
        assert set(mc.provenance_articles.values_list("pk", flat=True)) == election_ids
        assert mc.generation["model"] == "local-test-model"
        assert mc.generation["scores"] == {
            "clarity": 0.8,
            "measurability": 0.8,
            "answerability": 0.8,
            "temporal_validity": 0.8,
        }
        assert mc.generation["reasons"]["clarity"] == "clarity looks fine"
        assert sorted(mc.generation["cluster"]["article_ids"]) == sorted(election_ids)
        assert mc.resolve_by == datetime(2026, 10, 1, tzinfo=UTC)  # end of the resolve-by day
        assert mc.domain == "politics"
        assert "Answer format: One of the options" in mc.resolution_criteria
        quantity = drafts.get(type=Question.Type.QUANTITY)
        assert quantity.unit == "feet"
        # Every call was a real chat completion request for the configured model.
        assert len(fake.calls("generate")) == 2 and len(fake.calls("score")) == 3
        assert {r["model"] for r in fake.requests} == {"local-test-model"}

        # The next run finds both clusters done: no call, no duplicate.
        before = len(fake.requests)
        again = questions_generate_from_news(now=NOW + timedelta(minutes=5))
        assert again.clusters_already_done == 2 and again.questions_created == 0
        assert len(fake.requests) == before
        assert Question.objects.count() == 3


def test_malformed_json_is_logged_and_skipped(articles: Any, llm_settings: Any, caplog: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if is_election(request):
            return Reply('{"questions": [{"title": "Will the')  # truncated
        return Reply(
            json.dumps({"questions": [question(ids, title="Will Lake Mead's water level rise by September?")]})
        )

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        report = questions_generate_from_news(now=NOW)
    assert report.questions_created == 1
    assert any("malformed generation answer" in p for p in report.problems)
    assert "malformed generation answer" in caplog.text
    assert Question.objects.get().title == "Will Lake Mead's water level rise by September?"
    bad = NewsCluster.objects.get(questions_created=0)
    assert bad.finished_at is not None
    assert "not valid JSON" in bad.problems[0]["problem"]
    # The malformed answer got one correction round before it was given up.
    assert len([r for r in fake.requests if is_election(r)]) == 2


def test_wrong_types_and_bad_fields_are_rejected_one_by_one(articles: Any, llm_settings: Any, settings: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if not is_election(request):
            return Reply(json.dumps({"answer": "no questions today"}))
        return Reply(
            json.dumps(
                {
                    "questions": [
                        question(ids, type="essay"),
                        question(ids, provenance=[999999]),
                        question(ids, resolve_by="2026-05-01"),
                        question(ids, type="multiple_choice", options=["Only one"]),
                        question(ids, title=42),
                        "not an object",
                        question(ids, title="Will turnout in the Ruritania snap election exceed 60%?"),
                    ]
                }
            )
        )

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        settings.QUESTION_GENERATION_MAX_QUESTIONS_PER_CLUSTER = 10
        report = questions_generate_from_news(now=NOW)
        assert len(fake.calls("score")) == 1  # only the valid proposal was scored
    assert report.questions_created == 1
    assert Question.objects.get().title == "Will turnout in the Ruritania snap election exceed 60%?"
    problems = "\n".join(report.problems)
    assert "'type' 'essay' is not one of" in problems
    assert "'provenance' names articles outside the cluster: [999999]" in problems
    assert "'resolve_by' '2026-05-01' is not at least a day in the future" in problems
    assert "'options' must list at least two" in problems
    assert "'title' must be a non-empty string" in problems
    assert "a question must be a JSON object" in problems
    assert "no 'questions' list" in problems


def test_out_of_range_or_missing_scores_skip_that_question(articles: Any, llm_settings: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if is_election(request):
            return Reply(
                json.dumps(
                    {
                        "questions": [
                            question(ids, title="First?"),
                            question(ids, title="Second?"),
                            question(ids, title="Third?"),
                        ]
                    }
                )
            )
        return Reply(json.dumps({"questions": []}))

    def score(request: dict[str, Any]) -> Reply:
        text = prompt_text(request)
        if "First?" in text:
            return Reply(good_scores(1.5))
        if "Second?" in text:
            return Reply(json.dumps({"clarity": {"score": "high", "reason": "x"}}))
        return Reply(good_scores(0.6))

    with fake_llm(responder(generate, score)) as fake:
        llm_settings(fake)
        report = questions_generate_from_news(now=NOW)
    assert report.questions_created == 1
    assert Question.objects.get().title == "Third?"
    problems = "\n".join(report.problems)
    assert "'clarity.score' 1.5 is outside [0, 1]" in problems
    assert "'clarity.score' must be a number" in problems


def test_server_error_releases_the_cluster_for_a_later_run(articles: Any, llm_settings: Any) -> None:
    state = {"fail": True}

    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if state["fail"]:
            return Reply(status=500)
        return Reply(json.dumps({"questions": [question(ids, title=f"Question about {ids[0]}?")]}))

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        report = questions_generate_from_news(now=NOW)
        assert report.clusters_failed == 2 and report.questions_created == 0
        assert "server answered HTTP 500" in report.problems[0]
        assert not Question.objects.exists()
        assert set(NewsCluster.objects.values_list("claimed_at", "finished_at")) == {(None, None)}
        state["fail"] = False
        retry = questions_generate_from_news(now=NOW + timedelta(hours=1))
        assert retry.questions_created == 2
        assert set(NewsCluster.objects.values_list("attempts", flat=True)) == {2}


def test_timeout_is_a_failure_not_a_hang(articles: Any, llm_settings: Any) -> None:
    with fake_llm(responder(lambda request, ids: Reply(hang=True))) as fake:
        llm_settings(fake, timeout=0.5)
        report = questions_generate_from_news(now=NOW)
    assert report.clusters_failed == 2
    assert "did not answer within 0.5 s" in report.problems[0]
    assert not Question.objects.exists()


def test_a_claimed_cluster_is_left_to_its_worker(articles: Any, llm_settings: Any) -> None:
    calls: list[list[int]] = []

    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        calls.append(sorted(ids))
        return Reply(json.dumps({"questions": []}))

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        first = recent_clusters(now=NOW)[0]
        NewsCluster.objects.create(
            key=first.key, article_ids=list(first.article_ids), claimed_at=NOW - timedelta(minutes=1)
        )
        report = questions_generate_from_news(now=NOW)
    assert report.clusters_already_done == 1 and report.clusters_processed == 1
    assert calls == [sorted(a.pk for a in articles["drought"])]


def test_the_task_uses_the_configured_server(llm_settings: Any) -> None:
    now = timezone.now()
    for i, (t, s) in enumerate(DROUGHT):
        ArticleFactory(title=t, summary=s, published_at=now - timedelta(hours=1 + i))

    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        resolve_by = (now + timedelta(days=90)).date().isoformat()
        return Reply(json.dumps({"questions": [question(ids, title="Will Lake Mead recover?", resolve_by=resolve_by)]}))

    with fake_llm(responder(generate)) as fake:
        llm_settings(fake)
        assert generation_status()["text"] == "Question generation: on (model local-test-model)"
        result = generate_questions_from_news()
    assert result["questions_created"] == 1
    assert Question.objects.get().status == Question.Status.DRAFT
