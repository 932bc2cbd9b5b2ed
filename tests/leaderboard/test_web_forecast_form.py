"""The web forecast form: every question type, errors beside their fields as sentences that name
the field in the form's words followed by the service's (= the API's) words, replay sessions,
permissions and idempotent resubmission."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.services.forecasts import forecast_submit
from tests.factories import T0, ArticleFactory, QuestionFactory

pytestmark = pytest.mark.django_db

URL = reverse("leaderboard:forecast_form")


@pytest.fixture
def owner_client(owner: Any) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def form_url(agent: Agent, question: Question) -> str:
    return f"{URL}?agent={agent.slug}&question={question.pk}"


def page_form_data(client: Client, agent: Agent, question: Question) -> dict[str, str]:
    """The hidden inputs of the rendered form (idempotency key, session), as a browser would send."""
    html = client.get(form_url(agent, question)).content.decode()
    data = {}
    for name in ("idempotency_key", "session"):
        match = re.search(rf'name="{name}"(?: value="([^"]*)")?', html)
        data[name] = unescape(match.group(1) or "") if match else ""
    return data


def post(client: Client, agent: Agent, question: Question, **fields: str) -> Any:
    data = {**page_form_data(client, agent, question), "action": "submit", **fields}
    return client.post(form_url(agent, question), data)


def field_errors(response: Any, field: str) -> list[str]:
    html = response.content.decode()
    match = re.search(rf'<ul class="errorlist" data-field="{field}">(.*?)</ul>', html, re.S)
    return [unescape(m) for m in re.findall(r"<li>(.*?)</li>", match.group(1), re.S)] if match else []


def form_errors(response: Any) -> list[str]:
    html = response.content.decode()
    match = re.search(r'<ul class="errorlist" id="form-errors" role="alert">(.*?)</ul>', html, re.S)
    return [unescape(m) for m in re.findall(r"<li>(.*?)</li>", match.group(1), re.S)] if match else []


def service_messages(agent: Agent, question: Question, **body: Any) -> dict[str, list[str]]:
    """What the API's service says for the same body."""
    body.setdefault("prediction", {})
    with pytest.raises(ValidationError) as info:
        forecast_submit(agent=agent, question_id=question.pk, **body)
    return info.value.message_dict


def test_binary_error_beside_field_with_api_words_then_success(owner_client: Client, agent: Agent, owner: Any) -> None:
    question = QuestionFactory()
    expected = service_messages(agent, question, prediction={"probability": 1.5})["prediction.probability"]
    response = post(owner_client, agent, question, probability="1.5", rationale="Because.")
    assert response.status_code == 200
    assert expected == ["must be a probability between 0 and 1, got 1.5"]
    assert field_errors(response, "probability") == [f"The probability of YES {expected[0]}."]
    assert not Forecast.objects.exists()

    text = post(owner_client, agent, question, probability="abc")
    assert field_errors(text, "probability") == ["The probability of YES must be a number, got the string 'abc'."]
    blank = post(owner_client, agent, question, probability="")
    assert field_errors(blank, "probability") == ["The probability of YES is required."]

    ok = post(owner_client, agent, question, probability="0.7", rationale="Because.")
    forecast = Forecast.objects.get()
    assert ok.status_code == 302 and ok["Location"].endswith(f"&submitted={forecast.pk}")
    assert (forecast.prediction, forecast.channel, forecast.submitted_by, forecast.rationale) == (
        {"probability": 0.7},
        Forecast.Channel.WEB,
        owner,
        "Because.",
    )
    shown = owner_client.get(ok["Location"]).content.decode()
    assert f"Stored forecast #{forecast.pk}" in shown and "0.7" in shown


def test_multiple_choice_missing_option_and_sum(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(type=Question.Type.MULTIPLE_CHOICE, options=["Red", "Green", "Blue"])
    missing = post(owner_client, agent, question, option_0="0.5", option_1="0.5", option_2="")
    assert field_errors(missing, "option_2") == ["P(Blue) is missing: every option needs a probability."]
    bad_sum = post(owner_client, agent, question, option_0="0.5", option_1="0.5", option_2="0.5")
    expected = service_messages(agent, question, prediction={"probabilities": {"Red": 0.5, "Green": 0.5, "Blue": 0.5}})
    assert form_errors(bad_sum) == [f"The option probabilities {m}." for m in expected["prediction.probabilities"]]
    assert form_errors(bad_sum) == [
        "The option probabilities must add up to 1 (to within 0.000001), but they add up to 1.5."
    ]
    assert not Forecast.objects.exists()
    post(owner_client, agent, question, option_0="0.2", option_1="0.3", option_2="0.5")
    assert Forecast.objects.get().prediction == {"probabilities": {"Red": 0.2, "Green": 0.3, "Blue": 0.5}}


def test_quantity_interval_and_quantiles(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(type=Question.Type.QUANTITY, unit="USD")
    reversed_interval = post(
        owner_client, agent, question, quantity_mode="interval", interval_low="9", interval_high="3"
    )
    assert field_errors(reversed_interval, "interval_low") == [
        "The interval must not have its lower end above its upper end, got 9 above 3."
    ]
    bad_line = post(owner_client, agent, question, quantity_mode="quantiles", quantiles="0.1 40")
    assert field_errors(bad_line, "quantiles") == [
        'The quantiles (USD) must have one "level: value" per line, e.g. "0.5: 55"; line 1 has not.'
    ]
    post(owner_client, agent, question, quantity_mode="quantiles", quantiles="0.1: 40\n0.5: 55\n0.9: 70")
    assert Forecast.objects.get().prediction == {"quantiles": {"0.1": 40.0, "0.5": 55.0, "0.9": 70.0}}
    post(owner_client, agent, question, quantity_mode="value", value="12.5")
    assert Forecast.objects.latest("pk").prediction == {"value": 12.5}


def test_timeframe_period_at_granularity(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(type=Question.Type.TIMEFRAME, granularity=Question.Granularity.QUARTER)
    wrong = post(owner_client, agent, question, period="2026-07")
    expected = service_messages(agent, question, prediction={"period": "2026-07"})["prediction.period"]
    assert field_errors(wrong, "period") == [f"The period {expected[0]}."]
    assert "2026-Q3" in expected[0] or "YYYY-Qn" in expected[0] or "Q" in expected[0]
    post(owner_client, agent, question, period="2026-Q3")
    assert Forecast.objects.get().prediction == {"period": "2026-Q3"}


def test_relation_codes_json_and_text(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(type=Question.Type.RELATION, subject="USA", object="CHN")
    wrong_parent = post(owner_client, agent, question, relations='{"04": ["042", "190"]}')
    errors = field_errors(wrong_parent, "relations")
    assert errors == ["Second-level code 2 under 04 is CAMEO code '190', which belongs under '19', not under '04'."]
    post(owner_client, agent, question, relations="04: 042, 043\n19:")
    assert Forecast.objects.get().prediction == {"relations": {"04": ["042", "043"], "19": []}}


def test_open_ended_events_or_answer(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(type=Question.Type.OPEN_ENDED)
    both = post(owner_client, agent, question, events="A happens", answer="Yes because")
    assert form_errors(both) == [
        "The forecast must give exactly one of events (a list) or answer (a text), not both or neither."
    ]
    post(owner_client, agent, question, events="Talks resume\n\nA ceasefire is signed\n")
    assert Forecast.objects.get().prediction == {"events": ["Talks resume", "A ceasefire is signed"]}


def test_sources_rationale_and_graph(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory()
    article = ArticleFactory()
    cycle = post(
        owner_client,
        agent,
        question,
        probability="0.6",
        sources=f"{article.pk}\nnot a url",
        graph_events='[{"id": "a", "title": "A", "date": "2026-03-01"}, {"id": "b", "title": "B", "date": "March"}]',
        graph_edges='[{"source": "a", "target": "b", "relation": "Causes"}, {"source": "b", "target": "a", "relation": "Sparks"}]',
    )
    assert field_errors(cycle, "sources") == [
        "Source 2 (line 2) must be an article id or a valid http(s) URL, got 'not a url'."
    ]
    assert field_errors(cycle, "graph_events") == [
        "Graph event 2's date must be an ISO 8601 date (YYYY-MM-DD) or date-time, got 'March'."
    ]
    edge_errors = field_errors(cycle, "graph_edges")
    assert any(e.startswith("Graph edge 2's relation must be a relation type, one of Causes") for e in edge_errors)
    assert "The graph's edges must not form a cycle: a -> b -> a." in edge_errors
    assert not Forecast.objects.exists()

    not_json = post(owner_client, agent, question, probability="0.6", graph_events="[{", graph_edges="")
    assert field_errors(not_json, "graph_events")[0].startswith("The graph's events box is not valid JSON:")

    post(
        owner_client,
        agent,
        question,
        probability="0.6",
        sources=f"{article.pk}\nhttps://example.org/other",
        rationale="Talks are going well.",
        graph_events='[{"id": "a", "title": "Talks", "date": "2026-03-01"}, {"id": "b", "title": "Deal", "date": "2026-04-01"}]',
        graph_edges='[{"source": "a", "target": "b", "relation": "causes", "strength": 0.7, "confidence": 0.8}]',
    )
    forecast = Forecast.objects.get()
    assert forecast.sources == [article.pk, "https://example.org/other"]
    assert list(forecast.cited_articles.all()) == [article]
    assert forecast.graph["edges"][0]["relation"] == "Causes"


def test_closed_question_is_refused_with_service_message(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(status=Question.Status.CLOSED)
    response = post(owner_client, agent, question, probability="0.5")
    assert form_errors(response) == [
        f"Question {question.pk} is closed; live questions accept forecasts only while open."
    ]
    assert not Forecast.objects.exists()


def test_replay_question_needs_the_session_the_form_opens(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory(
        track=Question.Track.REPLAY,
        status=Question.Status.RESOLVED,
        open_at=datetime(2025, 1, 1, tzinfo=UTC),
        close_at=datetime(2025, 3, 1, tzinfo=UTC),
        resolve_by=datetime(2025, 3, 1, tzinfo=UTC),
    )
    page = owner_client.get(form_url(agent, question)).content.decode()
    # No forecast fields before the session exists: they would only fail.
    assert "Open replay session" in page and 'id="forecast-form"' not in page and 'id="session-first"' in page
    no_session = post(owner_client, agent, question, probability="0.4")
    assert no_session.status_code == 302
    told = owner_client.get(no_session["Location"]).content.decode()
    assert "Open the replay session first: it fixes the simulated date your forecast is made at." in told
    assert "/api/v1/replays/" not in told
    assert not Forecast.objects.exists()

    opened = owner_client.post(form_url(agent, question), {"action": "open_session"})
    assert opened.status_code == 302
    session = ReplaySession.objects.get(agent=agent, question=question)
    assert session.simulated_at == datetime(2025, 1, 30, 12, tzinfo=UTC)  # midpoint of the window
    owner_client.post(form_url(agent, question), {"action": "open_session"})
    assert ReplaySession.objects.count() == 1

    page = owner_client.get(form_url(agent, question)).content.decode()
    assert str(session.pk) in page and "2025-01-30" in page
    post(owner_client, agent, question, probability="0.4")
    assert Forecast.objects.get().session == session


def test_resubmitting_the_same_form_stores_one_forecast(owner_client: Client, agent: Agent) -> None:
    question = QuestionFactory()
    data = {**page_form_data(owner_client, agent, question), "action": "submit", "probability": "0.3"}
    first = owner_client.post(form_url(agent, question), data)
    second = owner_client.post(form_url(agent, question), data)
    assert Forecast.objects.count() == 1 and first["Location"] == second["Location"]
    changed = owner_client.post(form_url(agent, question), {**data, "probability": "0.9"})
    assert "was already used for forecast" in " ".join(field_errors(changed, "idempotency_key"))
    # The re-rendered form carries a fresh key, so submitting it again adds a forecast.
    fresh = re.search(r'name="idempotency_key" value="([^"]+)"', changed.content.decode())
    assert fresh and fresh.group(1) != data["idempotency_key"]
    owner_client.post(form_url(agent, question), {**data, "probability": "0.9", "idempotency_key": fresh.group(1)})
    assert Forecast.objects.count() == 2


def test_agents_of_other_teams_and_drafts_are_not_reachable(
    owner_client: Client, agent: Agent, rival: Any, rival_agent: Agent
) -> None:
    question = QuestionFactory()
    assert owner_client.get(form_url(rival_agent, question)).status_code == 404
    assert owner_client.post(form_url(rival_agent, question), {"probability": "0.5"}).status_code == 404
    draft = QuestionFactory(status=Question.Status.DRAFT, title="Secret draft")
    page = owner_client.get(form_url(agent, draft)).content.decode()
    assert f"The question &#x27;{draft.pk}&#x27; does not exist" in page and "Secret draft" not in page
    assert not Forecast.objects.exists()


def test_picker_lists_own_agents_and_forecastable_questions(
    owner_client: Client, agent: Agent, rival_agent: Agent
) -> None:
    live = QuestionFactory(title="Live one")
    QuestionFactory(title="Closed one", status=Question.Status.CLOSED)
    page = owner_client.get(URL).content.decode()
    assert "Owl One" in page and "Raven One" not in page
    assert "Live one" in page and "Closed one" not in page
    assert f'data-question="{live.pk}"' in page


def test_picker_searches_every_question_sample_world_first(owner_client: Client, agent: Agent) -> None:
    Question.objects.bulk_create(
        [
            Question(
                title=f"Market close question {i}",
                type="binary",
                status="open",
                open_at=T0,
                close_at=T0 + timedelta(days=400 + i),
                origin=Question.Origin.MARKET,
            )
            for i in range(520)
        ]
    )
    sample = QuestionFactory(
        title="Fictional harbour reopening", origin=Question.Origin.SAMPLE, close_at=T0 + timedelta(days=900)
    )
    first = owner_client.get(URL).content.decode()
    assert "Questions open for forecasts (521)" in first
    assert first.index(f'data-question="{sample.pk}"') < first.index("Market close question 0")
    last = Question.objects.get(title="Market close question 519")
    found = owner_client.get(URL, {"find": "close question 519"}).content.decode()
    assert "1 question match" in found and f'data-question="{last.pk}"' in found
    assert f'data-question="{last.pk}"' in owner_client.get(URL, {"find": f"#{last.pk}"}).content.decode()
    assert "Page 1 of 27" in first


def test_user_without_agents_is_told_how_to_get_one(db: Any) -> None:
    from tests.factories import UserFactory

    client = Client()
    client.force_login(UserFactory(username="lonely"))
    assert "You need an agent first" in client.get(URL).content.decode()


def test_question_row_link_without_agent(owner_client: Client, owner: Any, team: Any, agent: Agent) -> None:
    question = QuestionFactory(title="Linked from a row")
    single = owner_client.get(f"{URL}?question={question.pk}").content.decode()
    assert 'id="forecast-form"' in single and "Forecast as Owl One" in single
    from tests.factories import AgentFactory

    AgentFactory(team=team, name="Owl Two", slug="owl-two")
    several = owner_client.get(f"{URL}?question={question.pk}").content.decode()
    assert 'id="forecast-form"' not in several and "This field is required" not in several
    assert f'<input type="hidden" name="question" value="{question.pk}">' in several
    home = owner_client.get(reverse("leaderboard:home")).content.decode()
    assert f"{URL}?question={question.pk}" in home
