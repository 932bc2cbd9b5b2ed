"""A small hand-written storyline for the real-model tests: a water bill that passes a parliament."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ingestion.models import Question
from ingestion.services.questions import question_resolve
from tests.factories import ArticleFactory, QuestionFactory

OPEN = datetime(2026, 2, 2, tzinfo=UTC)
RESOLVED = datetime(2026, 3, 20, 15, tzinfo=UTC)
# (days after OPEN, outlet, headline, lead)
ARTICLES = [
    (
        0,
        "lakeside-courier.example",
        "Government tables the National Water Bill in parliament",
        "The water minister presented the bill, which caps abstraction by farms and funds new reservoirs.",
    ),
    (
        2,
        "capital-times.example",
        "Farmers' union warns the water bill will cost jobs",
        "The union said abstraction caps would force smaller farms to cut irrigation.",
    ),
    (
        5,
        "lakeside-courier.example",
        "Water bill passes first reading by 112 votes to 71",
        "The governing coalition and the Green party backed the bill at first reading.",
    ),
    (
        9,
        "northern-post.example",
        "Committee hearings on the water bill draw record submissions",
        "More than 4,000 submissions reached the environment committee.",
    ),
    (
        13,
        "capital-times.example",
        "Drought declared in three provinces as reservoirs fall",
        "Reservoir levels fell below 30 percent, adding pressure on parliament to act.",
    ),
    (
        16,
        "northern-post.example",
        "Environment committee recommends the water bill with amendments",
        "The committee softened abstraction caps for farms under 50 hectares.",
    ),
    (
        19,
        "lakeside-courier.example",
        "Farmers' union drops opposition after amendments",
        "The union said the committee's changes met its main concerns.",
    ),
    (
        22,
        "capital-times.example",
        "Opposition files a court challenge to the water bill's procedure",
        "The opposition argued the committee had skipped a required consultation.",
    ),
    (
        27,
        "northern-post.example",
        "High Court rejects the challenge to the water bill",
        "The court found the consultation had been carried out; the bill can proceed.",
    ),
    (
        31,
        "lakeside-courier.example",
        "Water bill passes second reading by 118 votes to 65",
        "Three opposition members crossed the floor to support the amended bill.",
    ),
    (
        36,
        "capital-times.example",
        "Senate review of the water bill finishes without changes",
        "The upper house returned the bill unamended after a two-week review.",
    ),
    (
        41,
        "northern-post.example",
        "Final vote on the water bill set for March 19",
        "The speaker scheduled the third reading for the last sitting day before recess.",
    ),
    (
        45,
        "lakeside-courier.example",
        "Parliament passes the National Water Bill at third reading",
        "The bill passed by 121 votes to 62 and now goes to the president for assent.",
    ),
    (
        46,
        "capital-times.example",
        "President signs the National Water Bill into law",
        "The president signed the act the morning after the final vote.",
    ),
]
NOISE = [
    (7, "capital-times.example", "City marathon draws 20,000 runners", "Runners crossed the bridge at dawn."),
    (24, "northern-post.example", "New bakery chain opens downtown", "Queues formed before the doors opened."),
]


def make_water_bill_question() -> Question:
    for day, outlet, title, lead in ARTICLES + NOISE:
        ArticleFactory(
            url=f"https://{outlet}/2026/{day}/{title.lower().replace(' ', '-')[:60]}",
            title=title,
            summary=lead,
            body=lead,
            published_at=OPEN + timedelta(days=day, hours=9),
            fetched_at=OPEN + timedelta(days=day, hours=10),
        )
    question = QuestionFactory(
        title="Will parliament pass the National Water Bill by 31 March 2026?",
        type=Question.Type.BINARY,
        resolution_criteria="Resolves Yes if parliament passes the National Water Bill at third reading by 31 March 2026.",
        open_at=OPEN,
        close_at=RESOLVED - timedelta(days=1),
        status=Question.Status.CLOSED,
    )
    question_resolve(question=question, outcome=True, resolved_at=RESOLVED, author_label="test", now=RESOLVED)
    question.refresh_from_db()
    return question
