"""Every link a visitor can follow from the home page leads to a page (no 404, no error page):
questions of every state, agents, forecasts, hindsight pages, the leaderboard and its views."""

from __future__ import annotations

import re
from collections import deque
from datetime import timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client

from ingestion.services.questions import question_annul, question_unresolve
from leaderboard.models import Agent
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.standings import standings_rebuild
from tests.factories import T0
from tests.leaderboard.grading_support import (
    RESOLVED_AT,
    RefEvent,
    add_forecast,
    make_question,
    make_reference,
    resolve,
)
from tests.leaderboard.standings_data import build_world

pytestmark = [pytest.mark.django_db]

HREF = re.compile(r'href="([^"#]+)')
SKIP = ("/admin/", "/accounts/", "/api/", "/static/", "/data/")


def _links(base: str, html: str) -> list[str]:
    found = []
    for href in HREF.findall(html):
        url = urljoin(base, href.replace("&amp;", "&"))
        parts = urlsplit(url)
        if parts.netloc not in ("", "testserver") or parts.path.startswith(SKIP):
            continue
        found.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


def test_no_normal_link_leads_to_an_error(client: Client, agent: Agent, settings: Any) -> None:
    settings.LLM_MODEL = ""
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    with_graph = make_question("binary", title="Resolved with a graph")
    add_forecast(agent, with_graph, {"probability": 0.6})
    resolve(with_graph, True)
    make_reference(with_graph, [RefEvent("e1", "Budget passed", (T0 + timedelta(days=3)).date(), 0.5, 0.9)])
    grade_question(question_id=with_graph.pk)
    annulled = make_question("relation", title="Annulled relation question")
    add_forecast(agent, annulled, {"relations": {"04": ["042"]}})
    resolve(annulled, {"relations": {"04": ["042"]}})
    question_annul(question=annulled, reason="Source withdrawn.", now=RESOLVED_AT)
    unresolved = make_question("binary", title="Un-resolved question", close_at=T0 + timedelta(days=1))
    resolve(unresolved, True)
    unresolved.refresh_from_db()
    question_unresolve(question=unresolved, note="Retracted", now=RESOLVED_AT)
    standings_rebuild()

    seen: set[str] = set()
    queue = deque(["/", "/questions/?status=any"])
    while queue and len(seen) < 250:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, f"{url} answered {response.status_code}"
        if "text/html" in response.get("Content-Type", ""):
            queue.extend(link for link in _links(url, response.content.decode()) if link not in seen)
    visited = " ".join(seen)
    for expected in ("/hindsight/questions/", "/forecasts/", "/agents/", "/leaderboard/calibration/"):
        assert expected in visited, expected
