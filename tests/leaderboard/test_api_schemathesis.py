"""Schemathesis over the published OpenAPI schema against a live server: every operation, all phases
(examples, coverage, fuzzing, stateful), with an agent token and real data to reach real paths.

A fixed budget keeps it repeatable and bounded: one seed, at most ``MAX_EXAMPLES`` cases per operation
and phase, and a wall clock of ``MAX_SECONDS``. Every check must pass: no server error, no response
outside the schema, no schema-valid request refused, no schema-violating request accepted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache

from grading.services import hindsight_build
from ingestion.models import Market, PricePoint, StructuredEvent
from leaderboard.models import Agent, Forecast
from leaderboard.services.forecasts import forecast_submit
from leaderboard.services.replay_sessions import replay_session_open
from tests.grading.corpus import T0, make_corpus, make_question, resolve
from tests.leaderboard.api_support import VALID_PREDICTIONS, live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 88
MAX_EXAMPLES = 25
MAX_SECONDS = 150


def _world(agent: Agent) -> dict[str, list[Any]]:
    """Open live questions of every type, replay questions with the agent's sessions, a resolved
    question with its hindsight graph and market prices, articles, structured events, forecasts."""
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="artemis", title="Artemis budget")
    for day, p in ((0, 0.4), (20, 0.55), (45, 0.7)):
        PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=day), probability=p)
    revealed = make_question(market=market)
    articles = make_corpus()
    resolve(revealed)
    assert hindsight_build(question_id=revealed.pk, builder="offline") is not None
    live = [live_question(qtype) for qtype in VALID_PREDICTIONS]
    replays = [replay_question(qtype) for qtype in ("binary", "multiple_choice")]
    sessions = [replay_session_open(agent=agent, question_id=q.pk)[0] for q in replays]
    for question in live[:3]:
        forecast_submit(
            agent=agent,
            question_id=question.pk,
            prediction=VALID_PREDICTIONS[question.type],
            channel=Forecast.Channel.API,
        )
    for i, (s, o, rel) in enumerate([("USA", "CHN", "042"), ("USA", "RUS", "043"), ("CHN", "USA", "190")]):
        StructuredEvent.objects.create(
            date=(T0 + timedelta(days=i)).date(),
            subject=s,
            object=o,
            relation=rel,
            relation_root=rel[:2],
            dedupe_key=str(i),
        )
    return {
        "question_ids": [q.pk for q in [*live, *replays, revealed]],
        "live_ids": [q.pk for q in live],
        "replay_ids": [q.pk for q in replays],
        "sessions": [str(s.pk) for s in sessions],
        "article_ids": [a.pk for a in articles[:10]],
        "slugs": [agent.slug],
    }


# What the schema cannot say, and so what a schema-valid request may still be refused for (400):
# evidence needs either a session or a live question, consistent with each other (a session of
# another question is refused); and (403) an agent with an open replay session reads as of now only
# for the live questions it forecasts, which depends on what it did before; which of the prediction
# shapes a forecast must take, and its options and bounds, depend on the question; the leaderboard
# refuses a reversed date range (`to` before `from`). The schema says each of these in words, beside
# the status it causes. What holds for every request it says in structure (the prediction's closed
# shapes, the CAMEO codes of an event filter, integers, batch bounds, closed bodies), and those need
# no exception here: the batch, whose items are each answered on its own, takes any item by schema.
SEMANTIC_CHECKS = """
[generation]
# Text holding NUL or a lone surrogate is refused by design (documented); generate valid text.
allow-x00 = false
codec = "utf-8"

[[operations]]
include-operation-id-regex = "^evidence_.*$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[[operations]]
include-operation-id = "v1_leaderboard_retrieve"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "429"]

[[operations]]
include-operation-id = "forecasts_create"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404", "409", "429"]
"""


def _config(world: dict[str, list[Any]]) -> str:
    """Schemathesis settings: known ids (and slugs, sessions) stand in for most generated ones."""
    lines = [SEMANTIC_CHECKS]
    for name, values in world.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}", ""]
    bindings = {
        "path.question_id": "question_ids",
        "path.article_id": "article_ids",
        "path.slug": "slugs",
        "query.question": "live_ids",
        "query.session": "sessions",
        "body.question": "question_ids",
        "body.session": "sessions",
    }
    lines.append("[parameters]")
    lines += [f'"{key}" = {{ dictionary = "{name}", probability = 0.7 }}' for key, name in bindings.items()]
    return "\n".join(lines) + "\n"


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    live_server: Any, agent: Agent, agent_key: str, settings: Any, tmp_path: Path
) -> None:
    settings.HINDSIGHT_RATE_LIMIT_REQUESTS = 0  # the run measures the contract, not the budget
    cache.clear()
    world = _world(agent)
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(world))
    report = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run",
        f"{live_server.url}/api/v1/schema/?format=json",
        "--header", f"Authorization: Token {agent_key}",
        "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES), "--max-time", str(MAX_SECONDS),
        "--workers", "1", "--generation-database", "none", "--request-timeout", "30",
        "--output-sanitize", "false", "--report", "json", "--report-json-path", str(report), "--no-color",
    ]  # fmt: skip
    # In the test's own folder: schemathesis keeps a cache in its working directory.
    run = subprocess.run(command, capture_output=True, text=True, timeout=MAX_SECONDS + 120, cwd=tmp_path)
    summary = json.loads(report.read_text())
    cases = summary["test_cases"]
    print(f"schemathesis: {cases['generated']} cases, {cases['unique_failures']} unique failures")
    assert summary["operations"]["tested"] == summary["operations"]["total"] >= 15, summary["operations"]
    assert summary["phases"]["stateful"]["status"] != "skip", summary["phases"]
    assert cases["generated"] > 500
    assert summary["failures"] == [] and summary["errors"] == [], run.stdout[-8000:]
