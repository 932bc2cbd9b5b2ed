"""A generated news corpus around one binary question, shared by the hindsight graph tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ingestion.models import Article, Question
from ingestion.services.questions import question_resolve
from tests.factories import ArticleFactory, QuestionFactory

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T_RES = datetime(2026, 3, 1, 12, tzinfo=UTC)
OUTLETS = ("herald.example.org", "tribune.example.net", "gazette.example.com")

# (days after t0, headline, lead): each storyline is reported by every outlet; leads name what led to
# them, as news reports do (the offline builder links events on such evidence, not on dates alone).
STORYLINES: list[tuple[int, str, str]] = [
    (3, "Senate committee approves Artemis lunar budget draft", "The committee approved the draft budget."),
    (8, "Artemis lunar budget gains support from key senators", "After the committee vote, senators backed the plan."),
    (
        13,
        "Treasury confirms funding room for Artemis lunar budget",
        "Following the senators' support, the treasury confirmed the room.",
    ),
    (18, "Critics delay vote on Artemis lunar budget amendment", "Opponents delayed one amendment."),
    (
        23,
        "Senate leaders schedule Artemis lunar budget vote",
        "After the amendment delay, the vote was set for February.",
    ),
    (28, "NASA completes Artemis lander milestone ahead of budget vote", "The lander milestone was completed."),
    (
        33,
        "Poll shows public support for Artemis lunar budget rises",
        "Support rose to 61 percent after the lander milestone.",
    ),
    (38, "Senate passes procedural motion on Artemis lunar budget", "Following the poll, the motion passed 58 to 40."),
    (
        43,
        "Governors endorse Artemis lunar budget in joint letter",
        "Twelve governors endorsed it after the procedural motion.",
    ),
    (48, "Budget office confirms Artemis lunar budget cost estimate", "The office confirmed the estimate."),
    (
        53,
        "Senate approves Artemis lunar budget in final vote",
        "After the governors' letter, the Senate approved the budget.",
    ),
    (57, "White House signs Artemis lunar budget into law", "The president signed the bill after the final vote."),
]
NOISE = [
    (5, "Local football club wins derby", "A late goal decided it."),
    (20, "Storm closes mountain roads", "Snow blocked two passes."),
    (40, "Bakery chain opens new branch", "Queues formed at dawn."),
]


def make_question(**overrides: Any) -> Question:
    values: dict[str, Any] = {
        "title": "Will the Senate approve the Artemis lunar budget by March 2026?",
        "resolution_criteria": "Resolves YES if the Senate approves the Artemis lunar budget before March 2026.",
        "open_at": T0,
        "close_at": T_RES - timedelta(days=1),
        "status": Question.Status.CLOSED,
    }
    values.update(overrides)
    return QuestionFactory(**values)


def resolve(question: Question, outcome: Any = True, at: datetime = T_RES) -> None:
    question_resolve(question=question, outcome=outcome, resolved_at=at, author_label="test", now=at)


def make_corpus(
    storylines: list[tuple[int, str, str]] | None = None, outlets: tuple[str, ...] = OUTLETS
) -> list[Article]:
    articles = []
    counter = 0
    for day, headline, lead in storylines if storylines is not None else STORYLINES:
        for n, host in enumerate(outlets):
            counter += 1
            prefix = ("", "Report: ", "Update: ")[n % 3]
            articles.append(
                ArticleFactory(
                    url=f"https://{host}/{day}/{counter}",
                    title=f"{prefix}{headline}",
                    summary=lead,
                    body=f"{lead} More details follow.",
                    published_at=T0 + timedelta(days=day, hours=n + 1),
                    fetched_at=T0 + timedelta(days=day, hours=n + 2),
                )
            )
    if storylines is None:
        for day, headline, lead in NOISE:
            counter += 1
            articles.append(
                ArticleFactory(
                    url=f"https://{OUTLETS[0]}/noise/{counter}",
                    title=headline,
                    summary=lead,
                    body=lead,
                    published_at=T0 + timedelta(days=day),
                    fetched_at=T0 + timedelta(days=day, hours=1),
                )
            )
    # An article after the resolution must never be used by the offline builder.
    ArticleFactory(
        url="https://herald.example.org/after/1",
        title="Artemis lunar budget Senate approves retrospective",
        summary="Looking back.",
        published_at=T_RES + timedelta(days=2),
        fetched_at=T_RES + timedelta(days=2),
    )
    return articles
