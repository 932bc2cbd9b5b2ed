"""What every page says, read in a real browser as a visitor, a team member and staff, over a world
with one of everything (tests.sweep_world) plus an outcome-only imported question, a retired agent
and a token whose creator left the team:

- no page states something its own data contradicts: a page that says no hindsight graph is built
  links to none and every hindsight link it shows opens; "outcome grades only" comes with no
  SrcP/KER column; every question's status reads as the database has it (a replay question still
  on offer reads "Open for replay", never "Resolved"), "Submit a forecast" only where forecasts
  are taken; "Active tokens" counts the tokens that still grant access;
- every abbreviation in a page's headers, terms, captions and score labels is explained on that
  page (in words a reader sees, not only in a tooltip), and no explanation repeats itself;
- every message a user can trigger on a form is a sentence that names the field, with no field
  path or API route in it.

The pages come from the URLconf, as in the page sweep (tests.test_page_sweep), less the admin, the
API and the downloads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest

from ingestion.models import Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Agent, ApiToken, Forecast, Membership
from leaderboard.selectors.agent_access import agent_access_refusal
from leaderboard.services.grade_runs import grade_question
from leaderboard.services.teams import agent_create, agent_retire, token_create
from tests.browser import DEFAULT_PASSWORD, login
from tests.factories import QuestionFactory, UserFactory
from tests.leaderboard.api_support import TYPE_FIELDS
from tests.sweep_world import NOW, SweepWorld, build_sweep_world
from tests.test_page_sweep import _urls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOT_PAGES = ("/admin/", "/api/", "/mcp", "/favicon", ".csv", "/data/", "/accounts/logout")
# Abbreviations any reader knows, and words written in capitals.
COMMON = {"UTC", "CSV", "JSON", "API", "URL", "HTTP", "HTTPS", "ID", "ISO", "RSS", "YES", "NO", "AI", "OK", "USD"}
ACRONYM = re.compile(r"(?<![\w-])(?:[A-Z][a-z]+[A-Z][A-Za-z]*|[A-Z]{2,}[0-9]*|[A-Z][0-9])(?![\w-])")
STATUSES = ("Open for replay", "Open", "Closed", "Resolved", "Annulled")
RAW = re.compile(r"prediction\.|graph\.(?:events|edges)|sources\[|/api/v1/|±|\w\[\d+\]")
NO_GRAPH = re.compile(r"no hindsight graph (?:is built|could be built|has been built)", re.IGNORECASE)

# What the browser reads of a page's main element.
READ_PAGE = """() => {
  const main = document.querySelector('main');
  if (!main) return null;
  const clone = main.cloneNode(true);
  clone.querySelectorAll('dt').forEach(dt => dt.append(': '));
  clone.querySelectorAll('th, td, li, p, dd, caption, summary, h1, h2, h3, span').forEach(e => e.append(' '));
  const text = clone.textContent.replace(/\\s+/g, ' ');
  const visible = e => !e.closest('figure');
  // A label's own words, not the options of the select inside it.
  const own = e => { const c = e.cloneNode(true); c.querySelectorAll('select, input, textarea').forEach(x => x.remove());
                     return c.textContent.replace(/\\s+/g, ' ').trim(); };
  const chrome = [...main.querySelectorAll('th, dt, caption, summary, label, .legend li')].filter(visible).map(own);
  const explained = [...main.querySelectorAll('dt')]
    .filter(dt => dt.nextElementSibling && dt.nextElementSibling.tagName === 'DD'
                  && dt.nextElementSibling.textContent.trim())
    .map(dt => dt.textContent.replace(/\\s+/g, ' ').trim());
  const tables = [...main.querySelectorAll('table')].map(t => ({
    cls: t.className,
    head: [...t.querySelectorAll('thead th')].map(th => th.textContent.trim()),
    rows: [...t.querySelectorAll('tbody tr')].map(tr => ({
      links: [...tr.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
      cells: [...tr.children].map(c => c.textContent.replace(/\\s+/g, ' ').trim()),
    })),
  }));
  return {
    text, chrome, explained, tables,
    scoreLabels: [...main.querySelectorAll('.scores .k')].map(e => e.textContent.trim()),
    hindsightLinks: [...main.querySelectorAll('a[href*="/hindsight/questions/"]')].map(a => a.getAttribute('href')),
    badges: (main.querySelector('h1 + p') || {textContent: ''}).textContent.replace(/\\s+/g, ' '),
    submitLink: !!main.querySelector('a[href*="/forecast/?question="]'),
  };
}"""


def _extend_world(world: SweepWorld) -> None:
    """What the sweep world lacks for these checks."""
    # An imported question whose hindsight graph exists (as ForecastBench questions inside the news
    # archive's dates have): its page must not say that none is built.
    Question.objects.filter(pk=world.graph_question.pk).update(
        origin=Question.Origin.IMPORTED, attribution={"source": "ForecastBench (Forecasting Research Institute)"}
    )
    # An imported question Hindsight holds no news for: graded on its outcome only.
    imported = QuestionFactory(
        title="Imported outcome-only question",
        origin=Question.Origin.IMPORTED,
        attribution={"source": "ForecastBench (Forecasting Research Institute)", "licence": "CC BY-SA 4.0"},
        open_at=datetime(2026, 1, 1, tzinfo=UTC),
        close_at=datetime(2026, 2, 1, tzinfo=UTC),
    )
    Forecast.objects.create(
        agent=world.agent,
        question=imported,
        received_at=datetime(2026, 1, 5, tzinfo=UTC),
        prediction={"probability": 0.7},
    )
    question_resolve(question=imported, outcome=True, resolved_at=datetime(2026, 2, 1, tzinfo=UTC), now=NOW)
    grade_question(question_id=imported.pk, now=NOW)
    # A retired agent with a token, and a token whose creator left the team.
    team = world.agent.team
    retired = agent_create(team=team, name="Retired helper", model_name="m")
    token_create(agent=retired, created_by=world.member)
    agent_retire(agent=retired, retired_by=world.member)
    leaver = UserFactory(username="leaver")
    membership = Membership.objects.create(team=team, user=leaver)
    token_create(agent=world.agent, created_by=leaver)
    membership.delete()


def _site_pages() -> list[str]:
    return [url for url in _urls() if not any(part in url for part in NOT_PAGES)]


def _explained(term: str, seen: dict[str, Any]) -> bool:
    if any(term == dt or term in dt.split() or dt.startswith(f"{term} ") for dt in seen["explained"]):
        return True
    t = re.escape(term)
    return bool(re.search(rf"(?<![\w-]){t}\s*(?::|\(|—|=)|\({t}\)", seen["text"]))


def _abbreviations(seen: dict[str, Any]) -> set[str]:
    found = set(seen["scoreLabels"])
    for text in seen["chrome"]:
        found |= {a for a in ACRONYM.findall(text) if a not in COMMON}
        if text in ("n", "cov"):
            found.add(text)
    return found


def _expected_status(question: Question) -> str:
    """The status a page must show, from the rules that decide what a question takes: a replay
    question still takes sessions and forecasts until its outcome is published."""
    if (
        question.track == Question.Track.REPLAY
        and question.outcome_published_at is None
        and question.status in (Question.Status.RESOLVED, Question.Status.CLOSED, Question.Status.ANNULLED)
    ):
        return "Open for replay"
    return str(Question.Status(question.status).label)


def _expected_tokens(agent: Agent) -> int:
    return sum(
        1
        for token in ApiToken.objects.filter(agent=agent, revoked_at=None).select_related("created_by")
        if agent_access_refusal(agent=agent, holder=token.created_by) is None
    )


def _check_page(url: str, seen: dict[str, Any], opens: Any) -> list[str]:
    problems: list[str] = []
    text = seen["text"]
    # Abbreviations explained on the page; no explanation said twice in a row.
    for term in sorted(_abbreviations(seen)):
        if not _explained(term, seen):
            problems.append(f"{url}: {term!r} is not explained on the page")
    repeated = re.search(r"\(([^()]{4,})\)\s*\(\1\)", text)
    if repeated:
        problems.append(f"{url}: says {repeated.group(0)!r}")
    # Graphs: the words and the links agree, and a link opens.
    question = re.fullmatch(r"/questions/(\d+)/", url)
    if (
        NO_GRAPH.search(text)
        and question
        and any(f"/questions/{question.group(1)}/" in h for h in seen["hindsightLinks"])
    ):
        problems.append(f"{url}: says no hindsight graph is built and links to one")
    for href in set(seen["hindsightLinks"]):
        if opens(href) != 200:
            problems.append(f"{url}: links to {href}, which does not open")
    if "toward “Yes”" in text and "toward the outcome" in text:
        problems.append(f"{url}: says green pushes toward “Yes” and toward the outcome")
    if "outcome grades only" in text and any(
        "SrcP" in t["head"] for t in seen["tables"] if "forecasts" in t["cls"].split()
    ):
        problems.append(f"{url}: says outcome grades only beside a SrcP column")
    # Statuses as the database has them, and forecasts offered only where they are taken.
    if question:
        q = Question.objects.get(pk=int(question.group(1)))
        if _expected_status(q) not in seen["badges"]:
            problems.append(f"{url}: status badge {seen['badges']!r}, expected {_expected_status(q)!r}")
        takes = (q.track == Question.Track.LIVE and q.status == Question.Status.OPEN) or q.offered_for_replay
        if seen["submitLink"] and not takes:
            problems.append(f"{url}: offers 'Submit a forecast' on a question that takes none")
    for table in seen["tables"]:
        for row in table["rows"]:
            ids = {int(m.group(1)) for h in row["links"] if (m := re.fullmatch(r"/questions/(\d+)/", h))}
            shown = [c for c in row["cells"] if c in STATUSES]
            if len(ids) == 1 and shown:
                expected = _expected_status(Question.objects.get(pk=ids.pop()))
                if shown[0] != expected:
                    problems.append(f"{url}: a row reads {shown[0]!r}, the question is {expected!r}")
        if "Active tokens" in table["head"]:
            column = table["head"].index("Active tokens")
            for row in table["rows"]:
                slugs = [m.group(1) for h in row["links"] if (m := re.search(r"/agents/([\w-]+)/$", h))]
                if slugs and len(row["cells"]) > column:
                    expected_n = _expected_tokens(Agent.objects.get(slug=slugs[0]))
                    if row["cells"][column] != str(expected_n):
                        problems.append(
                            f"{url}: {slugs[0]} shows {row['cells'][column]} active tokens, has {expected_n}"
                        )
    return problems


def _sweep_as(page: Any, urls: Iterable[str]) -> list[str]:
    problems: list[str] = []

    def opens(href: str) -> int:
        return int(page.request.get(href).status)

    for url in urls:
        # Asked first without navigating: POST-only and refused addresses are not pages to read.
        probe = page.request.get(url, max_redirects=0)
        if probe.status != 200 or "text/html" not in probe.headers.get("content-type", ""):
            continue
        page.goto(url)
        seen = page.evaluate(READ_PAGE)
        if seen is not None:
            problems += _check_page(url, seen, opens)
    return problems


def test_no_page_contradicts_its_data_and_every_abbreviation_is_explained(browser: Any, live_server: Any) -> None:
    world = build_sweep_world()
    _extend_world(world)
    urls = _site_pages()
    problems: list[str] = []
    for persona in (None, world.member, world.staff):
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        try:
            if persona is not None:
                login(page, persona.username)
            problems += [f"[{persona or 'visitor'}] {p}" for p in _sweep_as(page, urls)]
        finally:
            context.close()
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------ messages

# Bad input for each question type's form fields (and the parts every forecast has).
BAD_INPUT: dict[str, list[dict[str, str]]] = {
    "binary": [
        {
            "probability": "1.5",
            "sources": "not a url\n99999999",
            "graph_events": '[{"id": "a", "title": "A", "date": "March"}, {"id": "a", "title": "B", "date": "2026-03-01"}]',
            "graph_edges": '[{"source": "a", "target": "z", "relation": "Sparks", "strength": 3}]',
        },
        {"probability": "abc", "graph_events": "[{"},
        {"probability": ""},
    ],
    "multiple_choice": [{"option_0": "0.5", "option_1": "0.5", "option_2": "0.3"}, {"option_0": "x", "option_1": "1"}],
    "quantity": [
        {"quantity_mode": "interval", "interval_low": "9", "interval_high": "3"},
        {"quantity_mode": "quantiles", "quantiles": "0.1 40"},
        {"quantity_mode": "quantiles", "quantiles": "0.9: 10\n0.1: 40\n1.5: 3"},
        {"quantity_mode": "value", "value": "5000"},
    ],
    "timeframe": [{"period": "someday"}, {"period": "2026-Q7"}],
    "relation": [{"relations": "04: 190, xyz\n99:"}, {"relations": "04 042"}],
    "open_ended": [{"events": "", "answer": ""}, {"events": "A happens", "answer": "Because"}],
}
FORM_WORDS = ("forecast", "probabilit", "question", "session", "event", "answer", "source", "graph")


def _label_words(page: Any, field: str) -> list[str]:
    label = page.locator(f"label[for=id_{field}]")
    text = label.first.inner_text() if label.count() else field.replace("_", " ")
    if text.startswith("P("):
        return [text.split(":")[0].strip()]
    return [w.rstrip("s") for w in re.findall(r"[A-Za-z]{4,}", text.lower())] or [text.lower()]


CHECKED: list[str] = []  # every message read, printed at the end for a reader of the test log


def _check_message(message: str, names: list[str], where: str) -> list[str]:
    CHECKED.append(f"{where}: {message}")
    problems = []
    if not re.match(r"^[A-Z0-9“'\"(]", message) or not message.endswith((".", "!", "?")):
        problems.append(f"{where}: not a sentence: {message!r}")
    if not any(n.lower() in message.lower() for n in names):
        problems.append(f"{where}: names none of {names}: {message!r}")
    if RAW.search(message):
        problems.append(f"{where}: shows a field path or API route: {message!r}")
    return problems


def _form_errors(page: Any, where: str) -> list[str]:
    problems: list[str] = []
    shown = 0
    # A field's errors: the forecast form marks them data-field="name", Django's own rendering
    # id="id_name_error".
    for error in page.locator("ul.errorlist[data-field], ul.errorlist[id$=_error]").all():
        field = error.get_attribute("data-field") or (error.get_attribute("id") or "")[3:-6]
        for item in error.locator("li").all_inner_texts():
            shown += 1
            problems += _check_message(item.strip(), _label_words(page, field), f"{where} [{field}]")
    for item in page.locator("#form-errors li, ul.errorlist.nonfield li, ul.messages li.error").all_inner_texts():
        shown += 1
        problems += _check_message(item.strip(), list(FORM_WORDS), f"{where} [form]")
    if not shown:
        problems.append(f"{where}: the bad input showed no message")
    return problems


def test_every_message_a_user_can_trigger_is_a_sentence_naming_the_field(browser_page: Any) -> None:
    world = build_sweep_world()
    page = browser_page
    login(page, world.member.username, DEFAULT_PASSWORD)
    problems: list[str] = []
    agent = world.agent
    for qtype, attempts in BAD_INPUT.items():
        question = QuestionFactory(title=f"Messages {qtype}", type=qtype, **TYPE_FIELDS[qtype])
        for n, values in enumerate(attempts):
            page.goto(f"/forecast/?agent={agent.slug}&question={question.pk}")
            for name, value in values.items():
                target = page.locator(f"[name={name}]")
                if target.first.get_attribute("type") == "radio":
                    page.check(f"[name={name}][value={value}]")
                else:
                    target.fill(value)
            page.click("#forecast-form button[type=submit]")
            page.wait_for_load_state()
            problems += _form_errors(page, f"forecast {qtype} #{n + 1}")
    assert not Forecast.objects.filter(question__title__startswith="Messages").exists()

    # A question that does not exist, from the picker.
    page.goto(f"/forecast/?agent={agent.slug}&question=nine")
    for item in page.locator("ul.errorlist li").all_inner_texts():
        problems += _check_message(item, ["question"], "picker")

    # The team's forms: an unknown member, a second agent of the same name, a second team of the same name.
    team = agent.team
    for url, fields, where in (
        (f"/teams/{team.slug}/members/add/", {"username": "nobody-at-all"}, "add member"),
        (f"/teams/{team.slug}/agents/new/", {"name": agent.name}, "new agent"),
        ("/teams/new/", {"name": team.name}, "new team"),
    ):
        page.goto(url)
        for name, value in fields.items():
            page.fill(f"form.stacked [name={name}]", value)
        page.click("form.stacked button[type=submit]")
        page.wait_for_load_state()
        problems += _form_errors(page, where)

    # The endpoint form: an address that is no URL.
    page.goto(f"/teams/{team.slug}/agents/{agent.slug}/")
    page.fill("#endpoint [name=url]", "agent.example.org/hook")
    page.click("#endpoint form:has([name=url]) button[type=submit]")
    page.wait_for_load_state()
    for item in page.locator("ul.messages li.error").all_inner_texts():
        problems += _check_message(item, ["endpoint", "address", "url"], "endpoint")
    print("\n".join(CHECKED))
    assert not problems, "\n".join(problems)
    assert len(CHECKED) >= 30, f"only {len(CHECKED)} messages were triggered"
