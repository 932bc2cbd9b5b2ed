"""Each stage of the offline builder on plain data (no database): link items, spread relevance,
merge, orient and choose chains, judge direction."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from grading.builders.chains import OUTCOME, Edge, choose_chains, orient, widest_paths
from grading.builders.direction import Target
from grading.builders.itemgraph import hub_limit, link_items
from grading.builders.merge import merge_reports
from grading.builders.relevance import Doc, SubjectTerms
from grading.builders.spread import personalized_pagerank
from grading.builders.story import seed_items, spread_story

DAY = datetime(2026, 1, 1, 9, tzinfo=UTC)


def doc(n: int, text: str, *, day: int = 0, topics: tuple[str, ...] = (), host: str = "a.example") -> Doc:
    return Doc.make(
        id=n, title=text, lead=text, body=text, host=host, published_at=DAY + timedelta(days=day), topics=topics
    )


def filler(start: int, count: int) -> list[Doc]:
    """Items of other stories, so that the window has a realistic share of rare words."""
    return [
        doc(start + k, f"Item {k} about the weather in Town{k} and crops at Farm{k}", day=k % 40) for k in range(count)
    ]


# -- link items ------------------------------------------------------------------------------------


def test_a_rare_shared_name_links_two_items_and_a_hub_name_links_none() -> None:
    docs = [
        doc(1, "Protesters fill Kathmandu as Oli faces calls to quit"),
        doc(2, "Oli resigns after the Kathmandu protests", day=1),
        *[doc(10 + k, f"Trump comments on story number {k} in Varn{k}", day=k % 20) for k in range(hub_limit(40) + 5)],
    ]
    graph = link_items(docs)
    index = graph.index
    assert graph.weights[index[1], index[2]] > 0.1
    # "Trump" is written by more items than the hub limit: it links no two of them.
    assert graph.names[index[10], index[11]] == 0


def test_items_under_one_story_heading_are_linked_to_their_neighbours_in_time() -> None:
    heading = ("2025 Nepalese Gen Z protests",)
    docs = [doc(n, f"Development number {n} of Qarth", day=n, topics=heading) for n in range(1, 8)]
    graph = link_items([*docs, *filler(100, 30)])
    index = graph.index
    assert graph.headings[index[1], index[2]] > 0
    assert graph.headings[index[1], index[7]] == 0  # beyond the nearest neighbours in time


# -- spread relevance --------------------------------------------------------------------------------


def test_personalized_pagerank_stays_near_the_seeds() -> None:
    from scipy import sparse

    # 0-1-2 a chain from the seed 0; 3-4 another component.
    rows, cols = [0, 1, 3], [1, 2, 4]
    weights = sparse.coo_matrix((np.ones(3), (rows, cols)), shape=(5, 5))
    weights = (weights + weights.T).tocsr()
    scores = personalized_pagerank(weights, {0: 1.0})
    assert scores.sum() == pytest.approx(1.0)
    assert scores[0] > scores[1] > scores[2] > 0
    assert scores[3] == scores[4] == 0


def test_the_story_reaches_a_cause_that_does_not_name_the_subject_but_not_another_countrys_news() -> None:
    subject = SubjectTerms.for_question(
        title="Which party will win the most seats in Qarth's March election?",
        criteria="The party winning the most seats in the Qarth assembly election.",
        background="",
    )
    docs = [
        doc(1, "Qarth election: the Lotus Party wins the most seats", day=30),
        doc(2, "Qarth votes in the assembly election after months of unrest", day=28),
        doc(3, "Qarth prime minister Daxos resigns after protests in Vaes Tolorro", day=2),
        doc(4, "Protesters in Vaes Tolorro demand that Daxos resign", day=1),
        doc(5, "Interim leader Xaro calls the Qarth election after Daxos resigns", day=5),
        doc(6, "A bus crash near Vaes Dothrak kills nine", day=10),
        doc(7, "Volantis holds an assembly election; the Tiger Party wins the most seats", day=29),
        *filler(100, 60),
    ]
    story, seeds = spread_story_of(docs, subject)
    assert {1, 2} <= set(seeds.shares)
    assert {3, 5} <= story  # reached through Daxos and the election words
    assert 7 not in story  # another country's election
    assert 6 not in story


def spread_story_of(docs: list[Doc], subject: SubjectTerms) -> tuple[set[int], object]:
    seeds = seed_items(docs, subject)
    return {d.id for d in spread_story(link_items(docs), seeds)}, seeds


# -- merge -----------------------------------------------------------------------------------------


def test_reports_of_one_development_merge_into_one_event_with_all_sources() -> None:
    docs = [
        doc(1, "Volkar recalls eH7 trucks over a brake software fault", host="a.example"),
        doc(2, "Brake software fault forces Volkar eH7 truck recall", day=1, host="b.example"),
        doc(3, "Volkar starts eH7 series production", day=30),
    ]
    events = merge_reports(docs)
    assert [e.source_ids for e in events] == [(1, 2), (3,)]
    assert events[0].outlets == 2


# -- orient and choose chains -------------------------------------------------------------------------


def test_the_chain_whose_weakest_link_is_strongest_wins() -> None:
    days = {"a": date(2026, 1, 1), "b": date(2026, 1, 5), "c": date(2026, 1, 9)}
    edges = [
        Edge("a", "b", 0.6, False, 4),
        Edge("b", "c", 0.5, False, 4),
        Edge("c", OUTCOME, 0.7, False, 10),
        Edge("a", OUTCOME, 0.3, False, 18),
        Edge("b", OUTCOME, 0.2, False, 14),
    ]
    hops = widest_paths(days, edges)
    assert hops["a"].next == "b" and hops["a"].bottleneck == 0.5  # a -> b -> c -> outcome, weakest 0.5
    assert hops["c"].next == OUTCOME
    kept = choose_chains(hops, {"a": 0.9, "b": 0.5, "c": 0.5}, budget=3)
    assert kept[0] == "a" and set(kept) == {"a", "b", "c"}


def test_a_development_is_linked_to_the_one_before_it_however_many_quiet_weeks_between() -> None:
    docs = [doc(1, "Daxos resigns as Qarth prime minister", day=0), doc(2, "Qarth votes after Daxos resigned", day=170)]
    clusters = merge_reports(docs)
    graph = link_items([*docs, *filler(100, 30)])
    for cluster in clusters:
        for d in cluster.docs:
            d.relevance = 1.0
    edges = orient(
        [("e1", clusters[0]), ("e2", clusters[1])],
        graph.names + graph.headings,
        graph.index,
        outcome_docs=[],
        closing_day=date(2026, 6, 30),
    )
    between = next(e for e in edges if (e.cause, e.effect) == ("e1", "e2"))
    assert between.cue and between.coherence > 0.3


# -- judge direction ---------------------------------------------------------------------------------


def test_a_trials_steps_push_toward_a_conviction_and_one_word_does_not_turn_them() -> None:
    convict = Target.for_question(
        question_type="binary",
        title="Will the court convict former president Ardo Vell by June?",
        background="",
        outcome=True,
        options=[],
    )
    for step in (
        "Former president Ardo Vell is charged with plotting a coup",
        "The trial of Ardo Vell opens; he is accused of ordering the attacks",
        "The court places Ardo Vell under house arrest and bans visits",
    ):
        assert convict.in_hindsight(step, towards="Positive") == "Positive", step
    assert convict.direction("The court acquits Ardo Vell") == "Negative"
    # The same word reads the other way on another question.
    freed = Target.for_question(
        question_type="binary", title="Will Ardo Vell be released by June?", background="", outcome=True, options=[]
    )
    assert convict.direction("The court orders Ardo Vell released") == "Negative"
    assert freed.direction("The court orders Ardo Vell released") == "Positive"
