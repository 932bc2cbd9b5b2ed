"""Every page of the site, for a visitor, a team member and staff, over a world with one of
everything (tests.sweep_world): no page answers 5xx.

The URLs come from the URLconf itself: each pattern's parameters are filled from the objects in the
database, so a page added later is swept without editing this test; a parameter this test cannot
fill fails it by name. Only GET, like a person following links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from ingestion.models import Article, Question
from leaderboard.exports import DATASETS
from leaderboard.models import Agent, ApiToken, Forecast, ReplaySession
from tests.sweep_world import build_sweep_world

pytestmark = pytest.mark.django_db

PARAM = re.compile(r"<(?:(\w+):)?(\w+)>|\(\?P<(\w+)>[^)]*\)")
# Patterns this sweep does not request, and why.
SKIPPED = {
    "accounts/logout/": "logs the persona out (POST only)",
    "admin/logout/": "logs the persona out (POST only)",
    "admin/(?P<url>.*)$": "the admin's catch-all for unknown addresses",
    "admin/r/<path:content_type_id>/<path:object_id>/": "redirects to a public page that is swept itself",
}
# How many objects of a kind each pattern is requested with (every question and forecast: they are
# what varies by type, track and status).
ADMIN_OBJECTS_PER_MODEL = 2


def _patterns(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _patterns(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


def _admin_model(route: str) -> Any:
    match = re.match(r"admin/(\w+)/(\w+)/", route)
    return apps.get_model(match.group(1), match.group(2)) if match else None


def _values(route: str) -> list[dict[str, str]]:
    """Every assignment of the route's parameters that this world can give."""
    names = [name or regex_name for _, name, regex_name in PARAM.findall(route)]
    if not names:
        return [{}]
    agents = list(Agent.objects.select_related("team").order_by("pk"))
    if names == ["slug", "agent_slug"]:
        return [{"slug": a.team.slug, "agent_slug": a.slug} for a in agents]
    if names == ["slug", "agent_slug", "token_id"]:
        return [
            {"slug": t.agent.team.slug, "agent_slug": t.agent.slug, "token_id": str(t.pk)}
            for t in ApiToken.objects.select_related("agent__team")
        ]
    if names == ["uidb64", "token"]:
        return [{"uidb64": "MQ", "token": "set-password"}]
    if names == ["name", "fmt"]:
        return [{"name": name, "fmt": fmt} for name in DATASETS for fmt in ("csv", "json")]
    if names == ["app_label"]:
        return [{"app_label": label} for label in {m._meta.app_label for m in admin.site._registry}]
    if names in (["object_id"], ["id"]):
        model = _admin_model(route)
        assert model is not None, f"{route}: no model to take object ids from"
        pks = model.objects.order_by("pk").values_list("pk", flat=True)[:ADMIN_OBJECTS_PER_MODEL]
        return [{names[0]: str(pk)} for pk in pks]
    if len(names) == 1:
        name = names[0]
        ids: dict[str, Any] = {
            "question_id": Question.objects.values_list("pk", flat=True),
            "pk": Question.objects.values_list("pk", flat=True),
            "forecast_id": Forecast.objects.values_list("pk", flat=True),
            "article_id": Article.objects.values_list("pk", flat=True)[:2],
            "session_id": ReplaySession.objects.values_list("pk", flat=True)[:2],
            "slug": [*(a.slug for a in agents), *{a.team.slug for a in agents}],
        }
        if name in ids:
            return [{name: str(v)} for v in ids[name]]
    raise AssertionError(f"{route}: the sweep has no values for {names}; teach tests/test_page_sweep.py")


def _urls() -> list[str]:
    urls = []
    for route in _patterns(get_resolver().url_patterns):
        if route in SKIPPED:
            continue
        for values in _values(route):
            url = PARAM.sub(lambda m, v=values: v[m.group(2) or m.group(3)], route)  # type: ignore[misc]
            urls.append("/" + url.replace("^", "").replace("$", ""))
    return urls


def test_no_page_fails_for_any_persona() -> None:
    world = build_sweep_world()
    urls = _urls()
    personas: dict[str, Any] = {"visitor": None, "member": world.member, "staff": world.staff}
    failures = []
    counts = {}
    for persona, user in personas.items():
        client = Client(raise_request_exception=False)
        if user is not None:
            client.force_login(user)
        ok = 0
        for url in urls:
            response = client.get(url)
            if response.status_code >= 500:
                failures.append(f"{persona} GET {url}: {response.status_code}")
            elif response.status_code == 200:
                ok += 1
        counts[persona] = ok
    print(f"swept {len(urls)} URLs per persona; pages that rendered (200): {counts}")
    assert not failures, "\n".join(failures)
    # The member and staff see more than a visitor (their own forecasts, staff pages).
    assert counts["visitor"] < counts["member"] < counts["staff"]
