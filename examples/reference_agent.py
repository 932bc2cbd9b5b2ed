"""Hindsight's reference agent: a small, complete forecasting agent on the public API, written with
the Python client package (``pip install ./clients/python``; ``import hindsight_client``). How it
reads and forecasts is ``reference_forecasting.py`` beside it; this file is the agent's loop.

What it does, for every question it is offered:

1. lists the questions it will forecast (``Client.questions``): by default the ones with an
   evidence corpus — the sample world's first, then the real replay questions written from the news
   archive, replay before live — and not an imported question set such as ForecastBench's (those have
   articles only where an imported news archive covers their dates; ``--include-imported`` adds them);
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
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from reference_forecasting import forecast_graph, gather, llm_prediction, offline_prediction

from hindsight_client import (
    ApiError,
    Client,
    Forecast,
    HindsightError,
    InvalidRequest,
    Question,
    ReplaySession,
)

# Questions with an evidence corpus to read ("archive": real questions written from an imported news
# archive); "imported" sets (ForecastBench) have one only where such an archive covers their dates.
CORPUS_ORIGINS = ("sample", "archive", "admin", "market", "news")


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


def passed_over(hs: Client, *, track: str = "all", include_imported: bool = False) -> list[str]:
    """Why questions that are not offered were left out, one line per reason (none: nothing left out)."""
    reasons = []
    if track in ("replay", "all"):
        public = [
            q.id
            for q in hs.questions(track="replay", status="resolved", origin=list(CORPUS_ORIGINS))
            if q.outcome_revealed
        ]
        if public:
            reasons.append(
                f"{len(public)} replay question(s) whose outcome is already public, so they take no session or "
                f"forecast: {_ids(public)}"
            )
    if not include_imported:
        imported = [q.id for q in hs.questions(origin="imported") if not q.outcome_revealed]
        if imported:
            reasons.append(
                f"{len(imported)} imported question(s) without an evidence corpus to read (--include-imported "
                "forecasts them on outcome only)"
            )
    return reasons


def _ids(ids: list[int], shown: int = 8) -> str:
    listed = ", ".join(f"#{i}" for i in ids[:shown])
    return listed + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


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
        if questions is None and log is not None:
            for reason in passed_over(hs, track=track, include_imported=include_imported):
                log(f"Skipping {reason}.")
        if limit and len(chosen) > limit:
            if log is not None:
                log(
                    f"Skipping {len(chosen) - limit} question(s) beyond --limit {limit}: {_ids([q.id for q in chosen[limit:]])}."
                )
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
