"""After the loop on a tiny sample world, a browser walks the guided tour the run command prints."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import NoReverseMatch, reverse

from grading.models import HindsightGraph
from tests.browser import login, screenshot
from tests.factories import UserFactory
from tests.sampleworld.loop import run_loop


def _maybe(name: str, **kwargs: Any) -> str | None:
    try:
        return reverse(name, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_walk_the_tour(browser_page: Any, live_server: Any) -> None:
    result = run_loop(live_server.url)  # tasks run in-process (eager) here
    page = browser_page
    page.goto("/")
    assert "(fictional)" in page.content()
    screenshot(page, "sampleworld-home")
    for name in ("leaderboard:leaderboard", "leaderboard:questions"):
        url = _maybe(name)
        if url is not None:
            page.goto(url)
            assert page.locator("body").inner_text()
            screenshot(page, f"sampleworld-{name.split(':')[1]}")
    if _maybe("leaderboard:leaderboard"):
        page.goto(reverse("leaderboard:leaderboard"))
        body = page.locator("body").inner_text()
        assert "oracle" in body and "market-follower" in body
    graph = HindsightGraph.objects.filter(is_current=True, graph_built=True).order_by("question_id").first()
    assert graph is not None
    question_url = _maybe("leaderboard:question", question_id=graph.question_id)
    if question_url:
        page.goto(question_url)
        screenshot(page, "sampleworld-question")
    page.goto(reverse("grading:hindsight", kwargs={"question_id": graph.question_id}))
    assert "(fictional)" in page.content()
    screenshot(page, "sampleworld-hindsight")
    page.goto("/api/docs/")
    screenshot(page, "sampleworld-api-docs")
    staff = UserFactory(username="tour-staff", is_staff=True, is_superuser=True)
    login(page, staff.username)
    page.goto("/admin/")
    assert "Site administration" in page.content() or "administration" in page.content().lower()
    screenshot(page, "sampleworld-admin")
    assert result.agents["oracle"]
