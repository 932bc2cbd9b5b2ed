"""Hindsight's reference agent: a small, complete forecasting agent on the public API, written with
the Python client package (``pip install ./clients/python``; ``import hindsight_client``).

What it does, for every question it is offered:

1. lists the questions it will forecast (``Client.questions``): by default the ones with an
   evidence corpus — the sample world's first, replay before live — and not an imported question set
   such as ForecastBench's (those have no articles to read; ``--include-imported`` adds them);
   questions whose outcome is already public are skipped (nothing is left to forecast);
2. opens the replay sessions of the replay questions it will forecast (``Client.open_replay``):
   every evidence call made with a session is answered as of its simulated date, never later, and
   opening is how the agent learns that date. It then forecasts the replay questions in order of
   simulated date, each before the next, and only then the live ones (``Sessions`` says why);
3. for each question, searches the archive (``Client.search_articles``) and reads the best hits
   (``Client.read_article``); for relation questions it also queries structured events, and for
   choice questions the market price history;
4. builds a forecast graph from what it read: one event per story (near-duplicate headlines merged),
   linked in date order;
5. forecasts, and submits the forecast with its sources (the articles it read), a rationale and the
   graph (``Client.submit_forecast``), with an idempotency key so a rerun submits nothing twice;
6. closes every replay session it could not forecast in (``Client.close_replay``), also when an
   error or an interrupt ends the run, so that no session stays open; a rerun skips closed ones.

Two modes:

* ``--mode offline`` (default, deterministic): word cues in the headlines push a probability up or
  down; the latest market price is blended in when the question has a market; planned figures and
  dates in the background are adjusted by the balance of good and bad news.
* ``--mode llm``: the same evidence goes to any OpenAI-compatible server through the ``openai``
  client (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``--model`` or ``HINDSIGHT_AGENT_MODEL``); its
  JSON answer is checked and the offline forecast is used when the answer is unusable.

Usage::

    python examples/reference_agent.py --base-url http://127.0.0.1:8000 --token <TOKEN>
        [--mode offline|llm] [--track live|replay|all] [--limit N] [--include-imported] [--wait MINUTES]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hindsight_client import (
    ApiError,
    Article,
    Client,
    Event,
    Forecast,
    HindsightError,
    InvalidRequest,
    NotFound,
    PriceHistory,
    Question,
    ReplaySession,
)

# A self-contained copy on purpose: this script needs only the client package (hindsight_client), not
# the project, so it cannot import the project's stop-word list (ingestion/text.py). Word lists as text.
STOPWORDS = set(
    """a about after all an and any are as at be before between by can did do does for from has have how in
    into is it its of on or over that the their this to towards under until was what when which while who
    will with would fictional coded take month many open report""".split()  # noqa: SIM905
)
GOOD = set(
    """approve approves approved pass passes win wins won agree agrees agreed launch launches launched
    confirm confirms confirmed sign signs signed succeed succeeds success complete completes completed
    secure secures secured back backs backed endorse endorses endorsed clear clears cleared accept accepts
    accepted grant grants granted finish finishes ahead early gain gains leads lead surge surges reopen
    reopens praise praises cooperation aid deal record""".split()  # noqa: SIM905
)
BAD = set(
    """reject rejects rejected fail fails failed delay delays delayed block blocks blocked oppose opposes
    opposed halt halts halted strike withdraw withdraws withdrawn refuses refuse warn warns suspend suspends
    stall stalls stalled postpone postpones postponed cancel cancels cancelled shortage slows cracks flood
    scandal slips gaffe accuses threatens sanctions detains denounces defies closes closure misses loses
    drop drops cut cuts""".split()  # noqa: SIM905
)
MONTHS = {
    name: number
    for number, name in enumerate(
        "january february march april may june july august september october november december".split(),  # noqa: SIM905
        1,
    )
}
# Questions with an evidence corpus to read; "imported" sets (ForecastBench) are graded on outcome only.
CORPUS_ORIGINS = ("sample", "admin", "market", "news")


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def cue_balance(text: str) -> int:
    tokens = re.findall(r"[a-z]+", text.lower())
    return sum(t in GOOD for t in tokens) - sum(t in BAD for t in tokens)


@dataclass
class Evidence:
    articles: list[Article] = field(default_factory=list)  # read in full
    events: list[Event] = field(default_factory=list)  # structured events (relation questions)
    prices: PriceHistory | None = None  # market price history (choice questions)


def gather(hs: Client, question: Question, session: ReplaySession | None, read: int = 8) -> Evidence:
    """Search, read the best hits, and add events or prices: all as of the session's date (or now)."""
    scope: dict[str, Any] = {"session": session} if session else {"question": question}
    evidence = Evidence()
    query = " or ".join(dict.fromkeys(words(question.title)))
    for hit in hs.search_articles(query, limit=20, **scope).results[:read]:
        try:
            evidence.articles.append(hs.read_article(hit.id, **scope))
        except NotFound:  # gone since the search
            continue
    if question.type == "relation":
        evidence.events = hs.events(subject=question.subject, object=question.object, limit=100, **scope).events
    if question.type in ("binary", "multiple_choice"):
        try:
            evidence.prices = hs.prices(question, session=session)
        except ApiError:
            evidence.prices = None
    return evidence


# ------------------------------------------------------------------------------------ the graph


def forecast_graph(evidence: Evidence, limit: int = 12) -> dict[str, Any]:
    """One event per story, near-duplicate headlines merged, chained in date order."""
    events: list[dict[str, Any]] = []
    seen: list[set[str]] = []
    for article in sorted(evidence.articles, key=lambda a: a.published_at):
        title = re.sub(r"^(update|breaking):\s*|, sources say$| - analysis$", "", article.title, flags=re.I)
        tokens = set(words(title))
        if any(len(tokens & s) / max(1, len(tokens | s)) >= 0.5 for s in seen):
            continue
        seen.append(tokens)
        events.append(
            {
                "id": f"e{len(events) + 1}",
                "title": title,
                "description": article.summary[:300],
                "date": article.published_at.date().isoformat(),
            }
        )
    events = events[-limit:]
    edges = [
        {
            "source": a["id"],
            "target": b["id"],
            "relation": "Causes" if cue_balance(a["title"]) >= 0 else "Inhibits",
            "strength": 0.5 if cue_balance(a["title"]) >= 0 else -0.5,
            "confidence": 0.6,
        }
        for a, b in itertools.pairwise(events)
    ]
    return {"events": events, "edges": edges}


# ------------------------------------------------------------------------------------ offline forecasts


def offline_prediction(question: Question, evidence: Evidence) -> tuple[dict[str, Any], str]:
    headlines = [a.title for a in evidence.articles]
    balance = sum(cue_balance(h) for h in headlines)
    market = evidence.prices.latest() if evidence.prices else {}
    if question.type == "binary":
        adverse = cue_balance(question.title) < 0
        p = 1 / (1 + math.exp(-0.35 * (-balance if adverse else balance)))
        yes = market.get("Yes", market.get("YES"))
        if yes is not None:
            p = (p + yes) / 2
        p = min(0.95, max(0.05, p))
        return {"probability": round(p, 3)}, f"News balance {balance:+d} over {len(headlines)} articles" + (
            f", market at {yes:.2f}" if yes is not None else ""
        )
    if question.type == "multiple_choice":
        options = question.options
        score = Counter({o: 0.0 for o in options})
        for h in headlines:
            for o in options:
                if o.lower() in h.lower():
                    score[o] += 1 if cue_balance(h) >= 0 else -1
        weights = {o: math.exp(0.6 * score[o]) for o in options}
        if all(o in market for o in options):
            weights = {o: weights[o] / sum(weights.values()) + market[o] for o in options}
        total = sum(weights.values())
        probs = {o: round(weights[o] / total, 4) for o in options}
        probs[options[0]] = round(1 - sum(v for o, v in probs.items() if o != options[0]), 4)
        return {"probabilities": probs}, "Mentions weighted by good and bad news" + (
            " and market prices" if market else ""
        )
    if question.type == "quantity":
        numbers = [float(n.replace(" ", "")) for n in re.findall(r"\d[\d ]{2,}\d", question.background)]
        base = numbers[0] if numbers else 100.0
        value = round(base * (1 + 0.04 * max(-5, min(5, balance))))
        return {"value": value}, f"Planned {base:g}, adjusted {4 * max(-5, min(5, balance)):+d}% for the news balance"
    if question.type == "timeframe":
        match = re.search(r"in (\w+) (\d{4})", question.background)
        year, month = (
            (int(match.group(2)), MONTHS.get(match.group(1).lower(), 6))
            if match
            else (question.close_at.year, question.close_at.month)
        )
        shift = 1 if balance < -1 else (-1 if balance > 2 else 0)
        month += shift
        year, month = (year + (month - 1) // 12, (month - 1) % 12 + 1)
        period = f"{year}" if question.granularity == "year" else f"{year}-{month:02d}"
        if question.granularity == "quarter":
            period = f"{year}-Q{(month - 1) // 3 + 1}"
        return {"period": period}, f"Planned date shifted {shift:+d} month(s) for the news balance {balance:+d}"
    if question.type == "relation":
        codes = Counter(e.relation for e in evidence.events[-10:])
        cooperative = sum(n for c, n in codes.items() if c[:2] <= "08")
        conflict = sum(codes.values()) - cooperative
        wanted = [c for c, _ in codes.most_common() if (c[:2] <= "08") == (cooperative >= conflict)][:3]
        relations: dict[str, list[str]] = {}
        for code in wanted:
            relations.setdefault(code[:2], []).append(code)
        return {"relations": relations}, f"{cooperative} cooperative and {conflict} conflictual recent events"
    if question.type == "open_ended":
        recent = [a.title for a in sorted(evidence.articles, key=lambda a: a.published_at)][-4:]
        return {"events": recent or ["Talks continue"]}, "The latest developments continue"
    raise ValueError(f"unknown question type {question.type}")


# ------------------------------------------------------------------------------------ LLM forecasts


def llm_prediction(question: Question, evidence: Evidence, model: str) -> tuple[dict[str, Any], str] | None:
    """Ask an OpenAI-compatible model; None when its answer is unusable (the caller falls back)."""
    from openai import OpenAI

    shapes = {
        "binary": '{"probability": 0.0-1.0}',
        "multiple_choice": '{"probabilities": {OPTION: p, ...}} summing to 1',
        "quantity": '{"value": number}',
        "timeframe": f'{{"period": "..."}} at granularity {question.granularity}',
        "relation": '{"relations": {"04": ["042"], ...}} with CAMEO codes',
        "open_ended": '{"events": ["...", ...]}',
    }
    reading = "\n".join(f"- {a.published_at:%Y-%m-%d} {a.title}: {a.summary[:200]}" for a in evidence.articles)
    prompt = (
        f"Question: {question.title}\nType: {question.type}\nOptions: {question.options}\n"
        f"Background: {question.background}\nCriteria: {question.resolution_criteria}\n"
        f"Evidence read (all published before the forecast date):\n{reading}\n"
        f'Answer with JSON only: {{"prediction": {shapes[question.type]}, "rationale": "..."}}'
    )
    try:
        answer = OpenAI().chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}], temperature=0
        )
        text = answer.choices[0].message.content or ""
        data = json.loads(text[text.find("{") : text.rfind("}") + 1])
        return dict(data["prediction"]), str(data.get("rationale", ""))[:2000]
    except Exception as exc:  # any model or parsing failure: fall back to the offline forecast
        print(f"  llm answer unusable ({type(exc).__name__}: {exc}); using the offline forecast", file=sys.stderr)
        return None


# ------------------------------------------------------------------------------------ the loop


def forecast_question(
    hs: Client, question: Question, session: ReplaySession | None, *, mode: str, model: str, name: str
) -> tuple[Forecast, int]:
    """Gather evidence, forecast and submit; returns the forecast and the number of articles read."""
    evidence = gather(hs, question, session)
    prediction, rationale = offline_prediction(question, evidence)
    if mode == "llm":
        answer = llm_prediction(question, evidence, model)
        if answer is not None:
            prediction, rationale = answer
    key = f"{name}-{question.id}-{session.id if session else 'live'}"
    sources = [a.id for a in evidence.articles]
    note = f"{rationale}. Read {len(evidence.articles)} articles."
    graph = forecast_graph(evidence)
    try:
        forecast = hs.submit_forecast(
            question, prediction, session=session, sources=sources, rationale=note, graph=graph, idempotency_key=key
        )
    except InvalidRequest:
        if mode != "llm":
            raise
        # The model's prediction did not fit the question: submit the offline one instead.
        prediction, _ = offline_prediction(question, evidence)
        forecast = hs.submit_forecast(
            question, prediction, session=session, sources=sources, rationale=note, graph=graph,
            idempotency_key=f"{key}-offline",
        )  # fmt: skip
    return forecast, len(evidence.articles)


def offered(hs: Client, *, track: str = "all", include_imported: bool = False) -> list[Question]:
    """The default scope: questions with an evidence corpus whose outcome is not public yet, the sample
    world's first, replay (graded soonest: already resolved) before live; imported question sets last,
    and only when asked."""
    tracks = [(t, s) for t, s in (("replay", "resolved"), ("live", "open")) if track in (t, "all")]
    origins: list[Iterable[str]] = [CORPUS_ORIGINS, ("imported",)] if include_imported else [CORPUS_ORIGINS]
    found = [
        question
        for group in origins
        for t, s in tracks
        for question in hs.questions(track=t, status=s, origin=list(group))
        if not question.outcome_revealed
    ]
    rank = {"sample": 0, "imported": 2}
    return sorted(found, key=lambda q: (rank.get(q.origin, 1), q.track != "replay"))  # stable: deadlines kept


EARLIEST = datetime.min.replace(tzinfo=UTC)


class Sessions:
    """The run's replay sessions, and the order they impose.

    A replay forecast counts as leaked whatever the gateway served the agent, in any scope, dated at
    or after the session's simulated date before the forecast was received: a later session's
    evidence or a live question's news read first would spoil it. And while a session is open with
    no forecast in it, evidence as of now answers only for live questions the agent already
    forecasts (the others raise ``Forbidden``). So the agent opens the sessions of the replay
    questions it will forecast (which is how it learns their simulated dates), forecasts them in
    order of simulated date, each before the next, then the live questions; and it closes every
    session it could not forecast in, so that none stays open.
    """

    def __init__(self, hs: Client) -> None:
        self.hs = hs
        self.opened: dict[int, ReplaySession | ApiError] = {}
        self.forecast_in: set[str] = set()

    def open(self, questions: Iterable[Question]) -> None:
        """Open (or get) the session of every replay question among ``questions``."""
        for question in questions:
            if question.is_replay:
                try:
                    self.opened[question.id] = self.hs.open_replay(question)
                except ApiError as exc:  # e.g. its outcome was published since the listing
                    self.opened[question.id] = exc

    def in_order(self, questions: Iterable[Question]) -> list[Question]:
        """Replay questions by simulated date (those refused a session first), then live ones as given."""

        def when(question: Question) -> tuple[bool, datetime]:
            found = self.opened.get(question.id)
            return not question.is_replay, found.simulated_date if isinstance(found, ReplaySession) else EARLIEST

        return sorted(questions, key=when)

    def close_unforecast(self, only: ReplaySession | None = None) -> list[ReplaySession]:
        """Close the open sessions (or ``only`` that one) holding no forecast of this run or an earlier
        one; returns those closed. A failure to close one is reported and the others are still closed."""
        closed: list[ReplaySession] = []
        for question_id, found in self.opened.items():
            if not isinstance(found, ReplaySession) or found.closed or found.id in self.forecast_in:
                continue
            if only is not None and found.id != only.id:
                continue
            try:
                if next(iter(self.hs.forecasts(session=found, page_size=1)), None) is None:
                    self.opened[question_id] = now_closed = self.hs.close_replay(found)
                    closed.append(now_closed)
            except HindsightError as exc:
                print(f"  could not close replay session {found.id}: {exc}", file=sys.stderr)
        return closed


def attempt(hs: Client, sessions: Sessions, question: Question, **how: str) -> tuple[int | None, str]:
    """One question: its HTTP status (None when skipped) and what happened, for the progress line."""
    found = sessions.opened.get(question.id)
    if isinstance(found, ApiError):
        return found.status, f"refused: {found}"
    if found is not None and found.closed_at is not None:
        return None, f"skipped: its replay session was closed at {found.closed_at:%Y-%m-%d %H:%M} UTC"
    try:
        forecast, read = forecast_question(hs, question, found, **how)
    except ApiError as exc:  # one refused question never stops the others
        closed = sessions.close_unforecast(only=found) if found is not None else []
        return exc.status, f"refused: {exc}" + ("; its replay session is closed" if closed else "")
    if found is not None:
        sessions.forecast_in.add(found.id)
    return 201 if forecast.created else 200, f"read {read:>2}, forecast {forecast.id} " + (
        "created" if forecast.created else "unchanged"
    )


def run(
    base_url: str,
    token: str,
    *,
    mode: str = "offline",
    track: str = "all",
    limit: int = 0,
    include_imported: bool = False,
    model: str = "",
    name: str = "reference",
    questions: Iterable[Question | Mapping[str, Any]] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[int, int]:
    """Forecast every offered question (or the given ones) once, replay questions first in order of
    simulated date; returns counts by HTTP status (201 created, 200 unchanged by its idempotency key,
    4xx refused). ``log`` gets a progress line per question. No session is left open on return, nor
    when an exception or an interrupt ends the run."""
    with Client(base_url, token) as hs:
        chosen = (
            offered(hs, track=track, include_imported=include_imported)
            if questions is None
            else [q if isinstance(q, Question) else Question.from_json(dict(q)) for q in questions]
        )
        if limit:
            chosen = chosen[:limit]
        statuses: Counter[int] = Counter()
        sessions = Sessions(hs)
        try:
            sessions.open(chosen)
            chosen = sessions.in_order(chosen)
            for number, question in enumerate(chosen, 1):
                status, outcome = attempt(hs, sessions, question, mode=mode, model=model, name=name)
                if status is not None:
                    statuses[status] += 1
                if log is not None:
                    log(
                        f"[{number:>3}/{len(chosen)}] {question.track:<6} #{question.id:<6} "
                        f"{question.title[:56]:<56} {outcome}"
                    )
        finally:
            for session in sessions.close_unforecast():
                if log is not None:
                    log(f"Closed replay session {session.id} on question #{session.question}: no forecast in it.")
    return dict(statuses)


def wait_for_grades(base_url: str, token: str, *, minutes: float, log: Callable[[str], None]) -> int:
    """Poll the agent's own forecasts until one is graded (or the time is up); returns how many are."""
    deadline = time.monotonic() + minutes * 60
    log(f"Waiting up to {minutes:g} min for grades (the grading sweep re-runs every few minutes)...")
    with Client(base_url, token) as hs:
        while True:
            graded = [f for f in hs.forecasts() if f.grade is not None]
            if graded or time.monotonic() >= deadline:
                break
            time.sleep(15)
    for forecast in graded[:10]:
        grade = forecast.grade
        assert grade is not None
        scores = {"correct": grade.correct, "Brier": grade.brier, "log score": grade.log_score,
                  "pinball": grade.pinball, "MIRAI F1": grade.second_level_f1, "F1": grade.open_f1,
                  "SrcP": grade.source_precision, "KER": grade.key_event_recall}  # fmt: skip
        shown = ", ".join(
            f"{k} {('yes' if v else 'no') if isinstance(v, bool) else f'{v:.3g}'}"
            for k, v in scores.items()
            if v is not None
        )
        log(f"  graded: forecast {forecast.id} on question {forecast.question}: {shown or forecast.grade_status}")
    return len(graded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("HINDSIGHT_TOKEN"))
    parser.add_argument("--mode", choices=("offline", "llm"), default="offline")
    parser.add_argument("--track", choices=("live", "replay", "all"), default="all")
    parser.add_argument("--limit", type=int, default=25, help="forecast at most N questions (default 25; 0: all)")
    parser.add_argument(
        "--include-imported", action="store_true", help="also imported question sets (no evidence corpus)"
    )
    parser.add_argument("--wait", type=float, default=0, metavar="MINUTES", help="then wait for grades")
    parser.add_argument("--model", default=os.environ.get("HINDSIGHT_AGENT_MODEL", "gpt-4o-mini"))
    args = parser.parse_args()
    if not args.token:
        parser.error("give --token or set HINDSIGHT_TOKEN (python manage.py create_agent prints one)")
    # A stop request ends the run through its cleanup, which closes sessions left without a forecast.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    statuses = run(
        args.base_url, args.token, mode=args.mode, track=args.track, limit=args.limit,
        include_imported=args.include_imported, model=args.model, log=lambda line: print(line, flush=True),
    )  # fmt: skip
    done = sum(n for status, n in statuses.items() if status < 400)
    print(f"{done} forecasts accepted in {time.monotonic() - started:.0f}s; by HTTP status: {statuses}")
    if not statuses and not args.include_imported:
        print("No open question with an evidence corpus; --include-imported forecasts imported ones (outcome only).")
    print(
        "Live forecasts are graded when their question resolves, replay ones within minutes (their outcome "
        f"shows once staff publish it). Your forecasts and grades: GET {args.base_url}/api/v1/forecasts/ "
        "(or --wait MINUTES here)."
    )
    if args.wait:
        wait_for_grades(args.base_url, args.token, minutes=args.wait, log=lambda line: print(line, flush=True))


if __name__ == "__main__":
    main()
