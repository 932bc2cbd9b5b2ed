"""Text never stops a hindsight build: the offline builder, fed arbitrary Unicode articles and
questions or real items of the shipped news archive (Wikipedia Current events, CC BY-SA 4.0),
builds a graph or says why it cannot (a ``BuildError``), and never raises anything else."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grading.builders.common import BuildContext, BuildError, thresholds_from_settings
from grading.builders.direction import Target, baseline_number, planned_month
from grading.builders.offline import article_doc, build_from_docs
from tests.grading.realworld import shipped_archive

T0 = datetime(2026, 3, 1, tzinfo=UTC)
T_RES = T0 + timedelta(days=60)

TEXT = st.text(
    st.one_of(st.characters(), st.sampled_from("0123456789.,%$€-\u2013 <>&;/ABCxyz")),
    max_size=200,
)
# Words of one story mixed with arbitrary text, so that articles are about the question and the
# builder goes past relevance to events, directions and links.
STORY_WORDS = (
    "Drevia Kastor parliament approves rejects ceasefire talks collapse prices rise fall not $1,234.56 4.644,56 "
    "12.5% May 2026 January 0000 after because"
)
STORY = st.lists(st.one_of(st.sampled_from(STORY_WORDS.split(" ")), TEXT), max_size=12).map(" ".join)
OUTCOMES: dict[str, Any] = {
    "binary": st.booleans(),
    "quantity": st.one_of(st.integers(-(10**30), 10**30), st.floats(allow_nan=False)),
    "timeframe": st.sampled_from(["2026-Q2", "2026-05", "2026-W20", "2026", "garbage"]),
    "multiple_choice": st.sampled_from(["Alpha", "Beta"]),
    "open_ended": st.lists(TEXT, min_size=1, max_size=3),
    "relation": st.fixed_dictionaries({"relations": st.dictionaries(TEXT, st.lists(TEXT, max_size=2), max_size=2)}),
}


def context(
    question_type: str, title: str, background: str, outcome: Any, granularity: str = "quarter"
) -> BuildContext:
    return BuildContext(
        question_id=1,
        title=title,
        question_type=question_type,
        options=["Alpha", "Beta"] if question_type == "multiple_choice" else [],
        resolution_criteria=background[:50],
        background=background,
        outcome=outcome,
        outcome_text=str(outcome)[:100],
        t0=T0,
        t_res=T_RES,
        resolution_version=1,
        earliest=(T0 - timedelta(days=30)).date(),
        latest=T_RES.date(),
        granularity=granularity,
    )


def build_or_refuse(ctx: BuildContext, docs: list[Any]) -> None:
    try:
        result = build_from_docs(ctx, docs, thresholds=thresholds_from_settings(), max_articles=200, max_events=20)
    except BuildError as exc:
        assert exc.reason and exc.message
        return
    assert any(e.is_outcome for e in result.draft.events)


@st.composite
def questions(draw: st.DrawFn) -> BuildContext:
    question_type = draw(st.sampled_from(sorted(OUTCOMES)))
    return context(question_type, draw(STORY), draw(STORY), draw(OUTCOMES[question_type]))


ARTICLE = st.tuples(STORY, STORY, STORY, st.one_of(TEXT, st.just("https://[not-an-address/x")), st.integers(-40, 60))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ctx=questions(), articles=st.lists(ARTICLE, min_size=1, max_size=8))
def test_arbitrary_articles_and_questions_build_or_are_refused(
    ctx: BuildContext, articles: list[tuple[str, str, str, str, int]]
) -> None:
    docs = [
        article_doc(id=n, title=t, summary=s, body=b, url=u, published_at=T0 + timedelta(days=d))
        for n, (t, s, b, u, d) in enumerate(articles, start=1)
    ]
    build_or_refuse(ctx, sorted(docs, key=lambda d: (d.published_at, d.id)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.integers(0, 12_000 - 300),
    question_type=st.sampled_from(["binary", "quantity"]),
    quantity=st.floats(1, 10_000),
)
def test_real_archive_items_build_or_are_refused(start: int, question_type: str, quantity: float) -> None:
    """Three hundred consecutive items of the archive (a few weeks of news) and a question written
    from the first one's story, with its full text as background (prices and sums included)."""
    items = shipped_archive()[start : start + 300]
    first = items[0]
    published = [datetime.fromisoformat(i["published_at"].replace("Z", "+00:00")) for i in items]
    shift = T0 - published[0]
    docs = [
        article_doc(id=n, title=i["title"], summary="", body=i["text"], url=i["url"], published_at=p + shift)
        for n, (i, p) in enumerate(zip(items, published, strict=True), start=1)
    ]
    story = " ".join(first.get("topic_path") or [first["title"]])
    outcome: Any = quantity if question_type == "quantity" else True
    build_or_refuse(context(question_type, f"Will {story} go on?", first["text"], outcome), docs)


def test_the_builders_number_and_date_readers_take_any_form() -> None:
    assert baseline_number("Gold stood at US$4,644.56 per ounce in March", 4700.0) == 4644.56
    assert baseline_number("Le taux était de 1.234,56 euros", 1300.0) == 1234.56
    assert planned_month("Launch planned for January 0000") is None  # no such year: no plan, no error
    assert planned_month("Launch planned for May 2026") == date(2026, 5, 1)
    target = Target.for_question(
        question_type="timeframe", title="When?", background="Planned for March 0000.", outcome="2026-Q2", options=[]
    )
    assert target.direction("The launch slips to June") in ("Positive", "Negative", "Neutral")
