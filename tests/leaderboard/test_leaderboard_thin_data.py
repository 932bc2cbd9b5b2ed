"""When data is thin the leaderboard says plainly which score ranks and why, lists provisional agents
in that score's order, marks columns that do not rank, explains every column without hovering, calls
a tie between two agents a tie, and the calibration page describes what it draws."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils.html import strip_tags

from leaderboard.selectors.pairwise import Pair
from leaderboard.services.standings import standings_rebuild
from tests.factories import AgentFactory, QuestionFactory
from tests.leaderboard.standings_data import build_world

pytestmark = pytest.mark.django_db


def _page(client: Any, url: str = "/leaderboard/") -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def _text(html: str) -> str:
    return " ".join(strip_tags(html).split())


def _part(html: str, pattern: str) -> str:
    found = re.search(pattern, html, re.DOTALL)
    assert found is not None, pattern
    return found.group(1)


def rows_of(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr class="([^"]*)">(.*?)</tr>', _part(html, r"<tbody>(.*?)</tbody>"), re.DOTALL)


def test_every_agent_provisional_is_listed_in_score_order_with_the_reason(client: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 50  # far more questions than this world has
    build_world()
    standings_rebuild()
    board = _page(client)
    rule = _text(_part(board, r'<p id="rank-rule">(.*?)</p>'))
    assert "Ranks go by Brier (lower is better), not yet by the difficulty-adjusted Brier" in rule
    assert "this view has fewer" in rule
    competing = [r for r in rows_of(board) if r[0] != "baseline"]
    assert f"so all {len(competing)} agents are provisional" in rule and "listed in order of Brier" in rule
    rows = re.findall(r'<tr class="([^"]*)">(.*?)</tr>', _part(board, r"<tbody>(.*?)</tbody>"), re.DOTALL)
    agents = [body for cls, body in rows if cls != "baseline"]
    assert agents and all("provisional" in body for _, body in rows if _ == "provisional")
    assert all(cls in ("provisional", "baseline") for cls, _ in rows)
    briers = [float(_text(_part(body, r'<td class="num brier"[^>]*>(.*?)</td>')).split()[0]) for body in agents]
    assert briers == sorted(briers)
    # The adjusted Brier is shown but marked: it does not rank this view.
    header = _part(board, r"<thead>(.*?)</thead>")
    assert re.search(r"Adjusted Brier(</a>)?<small [^>]*>does not rank here", header), header
    # Every column and abbreviation explained in a disclosure that keyboards and touch reach.
    legend = _part(board, r'<details id="column-help">(.*?)</details>')
    assert "<summary>" in legend
    terms = [_text(t) for t in re.findall(r"<dt>(.*?)</dt>", legend, re.DOTALL)]
    for label in re.findall(r'<th scope="col" class="num[^"]*" title="[^"]*">(?:<a [^>]*>)?([^<]+)', board):
        assert label.strip() in terms, (label, terms)
    assert "BI" in terms and "provisional" in terms and "baseline" in terms


def test_ranked_by_the_adjusted_brier_says_why(client: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    standings_rebuild()
    rule = _text(_part(_page(client), r'<p id="rank-rule">(.*?)</p>'))
    assert "Ranked by Adjusted Brier (lower is better)" in rule
    assert "It ranks because at least 2 agents each have 3 or more questions that other agents answered too" in rule
    assert "every agent is provisional" not in rule


def test_an_even_split_reads_indistinguishable() -> None:
    other = AgentFactory.build(name="Other", slug="other")
    tie = Pair(other=other, other_rank=2, shared=10, share=0.5, mean_difference=0.0)
    close = Pair(other=other, other_rank=2, shared=10, share=0.97, mean_difference=0.0002)
    clear = Pair(other=other, other_rank=2, shared=10, share=0.9, mean_difference=-0.05)
    assert tie.indistinguishable and close.indistinguishable and not clear.indistinguishable


def test_calibration_page_names_what_it_draws(client: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    standings_rebuild()
    page = _page(client, "/leaderboard/calibration/?top=8")
    drawn = len(re.findall(r"<tr><td class=\"num\">", page))
    intro = _text(_part(page, r"<p>Track: (.*?)</p>"))
    assert re.search(rf"the only {drawn} ranked agents?' \(of the 8 asked for\)", intro), intro
    caption = _text(_part(page, r'<figcaption id="calibration-caption"[^>]*>(.*?)</figcaption>'))
    assert "for forecasts above 50% the agent was under-confident" in caption
    assert "for forecasts below 50% over-confident" in caption


def test_filters_say_which_options_are_empty_and_a_reversed_range_is_reversed(client: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    QuestionFactory(domain="sports")  # open: nothing graded in it yet
    standings_rebuild()
    board = _page(client)
    domain = _part(board, r'<select name="domain">(.*?)</select>')
    assert re.search(r'<option value="sports">sports \(none graded yet\)</option>', domain), domain
    assert re.search(r'<option value="politics">politics \(\d+\)</option>', domain), domain
    horizon = _part(board, r'<select name="horizon">(.*?)</select>')
    assert "(none graded yet)" in horizon and re.search(r"\(\d+\)</option>", horizon)
    response = client.get("/leaderboard/?from=2026-03-01&to=2026-01-01")
    assert response.status_code == 400
    assert "The date range is reversed" in _text(response.content.decode())
