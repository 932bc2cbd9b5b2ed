"""Story finding on text the project did not write, through the builder's default path (articles
stored, questions loaded, graphs built and stored by the build service): an election whose causes
never name the winner, a former head of state's trial among other countries' courts, and a product
storyline whose every report names the company and the product. Items: Wikipedia "Current events"
portal (CC BY-SA 4.0), see realworld/PROVENANCE.md; the product storyline is hand-written."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from ingestion.models import Question
from ingestion.services.questions import questions_load
from tests.grading import storylines
from tests.grading.realworld import BOLSONARO, NEPAL, lines, load_archive
from tests.ingestion.fakeserver import FakeServer
from tests.ingestion.fakeserver import fake_server as fake_server  # the fixture

pytestmark = pytest.mark.django_db

NEPAL_ELECTION: dict[str, Any] = {
    "external_id": "wcep-test:nepal-election-2026",
    "title": "Which party will win the most seats in Nepal's 5 March 2026 general election?",
    "type": "multiple_choice",
    "track": "replay",
    "options": ["Rastriya Swatantra Party", "Nepali Congress", "CPN (UML)", "Someone else"],
    "outcome": "Rastriya Swatantra Party",
    "open_at": "2025-12-01T00:00:00Z",
    "close_at": "2026-03-05T00:00:00Z",
    "resolved_at": "2026-03-08T12:00:00Z",
    "resolution_criteria": "The party that wins the most seats in the House of Representatives at Nepal's "
    "5 March 2026 general election, by the official results.",
    "background": "Nepal holds a general election for its House of Representatives on 5 March 2026.",
}
BOLSONARO_TRIAL: dict[str, Any] = {
    "external_id": "wcep-test:bolsonaro-convicted-2025",
    "title": "Will Brazil's Supreme Federal Court convict Jair Bolsonaro of plotting a coup by 30 September 2025?",
    "type": "binary",
    "track": "replay",
    "outcome": True,
    "open_at": "2025-02-21T00:00:00Z",
    "close_at": "2025-09-30T00:00:00Z",
    "resolved_at": "2025-09-11T20:00:00Z",
    "resolution_criteria": "Resolves Yes if Brazil's Supreme Federal Court convicts former president Jair Bolsonaro "
    "in the trial over the 2022 coup plot by 30 September 2025.",
    "background": "Former president Jair Bolsonaro stands trial before Brazil's Supreme Federal Court, accused of "
    "plotting a coup after losing the 2022 election.",
}


def _build(entry: dict[str, Any]) -> HindsightGraph:
    questions_load(entries=[entry])
    question = Question.objects.get(external_id=entry["external_id"])
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    return graph


def _cited(graph: HindsightGraph) -> dict[str, str]:
    """Each non-outcome event's source texts, with its direction."""
    out = {}
    for event in graph.events.filter(is_outcome=False).select_related("impact").prefetch_related("sources"):
        for article in event.sources.all():
            out[article.summary] = event.impact.direction
    return out


def test_an_election_graph_reaches_the_causes_that_never_name_the_winner() -> None:
    load_archive(lines(NEPAL))
    graph = _build(NEPAL_ELECTION)
    assert graph.graph_built, graph.quality["failures"]
    cited = _cited(graph)

    def has(start: str) -> bool:
        return any(text.startswith(start) for text in cited)

    # The causes: the protests, the prime minister's resignation, the dissolution and the interim
    # government. None names the Rastriya Swatantra Party.
    assert any("protest" in text.lower() and "social media" in text for text in cited)  # the protests
    assert has("Nepalese president Ram Chandra Poudel and prime minister K.P. Sharma Oli both resign") or has(
        "Nepalese Prime Minister K.P. Sharma Oli resigns"
    )
    assert has("The Nepali Parliament is dissolved and Sushila Karki is to be sworn in as interim prime minister")
    causes = [t for t in cited if t.startswith(("Nepalese", "The Nepali Parliament", "Protests against"))]
    assert causes and not any("Rastriya Swatantra" in text or "RSP" in text for text in causes)
    # Other countries' Gen Z protests and elections, and Nepal's road accidents, stay out.
    for noise in ("Moroccan", "Malagasy", "Madagascar", "Peruvian", "Japanese citizens", "Thai citizens", "bus "):
        assert not any(noise in text for text in cited), noise
    assert graph.quality["depth"] >= 3


def test_a_trial_graph_keeps_other_countries_courts_out_and_reads_its_steps_toward_a_conviction() -> None:
    load_archive(lines(BOLSONARO))
    graph = _build(BOLSONARO_TRIAL)
    assert graph.graph_built, graph.quality["failures"]
    cited = _cited(graph)

    def direction(start: str) -> str | None:
        return next((d for text, d in cited.items() if text.startswith(start)), None)

    # The trial's steps: charged, made a defendant, the trial opens, house arrest, the final phase;
    # each pushes toward Yes on "Will the court convict ...?".
    steps = (
        "Former President of Brazil Jair Bolsonaro is formally charged",
        "The Supreme Federal Court of Brazil rules former president Jair Bolsonaro and seven others as defendants",
        "The trial against former Brazilian President Jair Bolsonaro",
        "The Supreme Court of Brazil issues a house arrest order for former President Jair Bolsonaro",
        "The final phase of the trial of former Brazilian president Jair Bolsonaro",
    )
    for step in steps:
        assert direction(step) == "Positive", (step, direction(step))
    # Other countries' courts sentencing other former presidents are another story.
    for other in ("Peru", "Argentina", "Colombia", "Georgia", "Sarkozy", "Kabila", "Duterte", "Philippine"):
        assert not any(other in text for text in cited), other
    # No step is Negative because of one word ("attacks", "bans").
    assert all(d != "Negative" for text, d in cited.items() if "Jair Bolsonaro" in text)


def test_a_product_storyline_whose_every_report_names_the_company_and_product_builds_a_graph_that_passes(
    fake_server: FakeServer,
) -> None:
    story = next(s for s in storylines.load() if s.key == "technology-volkar-eh7")
    questions = storylines.publish([story], fake_server, now=datetime.fromisoformat("2026-04-01T00:00:00+00:00"))
    graph = hindsight_build(question_id=questions[story.key].pk, builder="offline")
    assert graph is not None
    assert graph.graph_built, graph.quality["failures"]
    titles = " ".join(graph.events.filter(is_outcome=False).values_list("title", flat=True))
    for development in ("battery deal", "Chip shortage", "recalls", "certification", "series production", "dealers"):
        assert development in titles, development
    # Another truck maker's recall and chip shortage are another story.
    assert "Norhaul" not in titles


def test_a_window_too_large_to_read_whole_is_narrowed_by_full_text_search(monkeypatch: pytest.MonkeyPatch) -> None:
    from grading.builders import window

    load_archive(lines(NEPAL))
    monkeypatch.setattr(window, "WINDOW_MAX_ARTICLES", 100)  # this cut holds 382 items
    graph = _build(NEPAL_ELECTION)
    cited = _cited(graph)
    assert graph.graph_built, graph.quality["failures"]
    assert any(text.startswith("The Nepali Parliament is dissolved") for text in cited)
    attempt = GraphBuildAttempt.objects.get(graph=graph)
    assert attempt.log[0]["window_articles"] < 200  # only the items naming the question's words were read
