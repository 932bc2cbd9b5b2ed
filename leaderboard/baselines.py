"""Baseline agents the platform runs itself, registered like any team ("Hindsight baselines").

* ``market-follower`` submits the question's market price as of its forecast date (the latest price
  the gateway shows it), on binary and multiple-choice questions that have a market;
* ``always-half`` submits 0.5 on every binary question and a uniform vector on every multiple-choice
  question;
* ``reference-offline`` is ``examples/reference_agent.py`` in its deterministic offline mode.

All three go through the public HTTP API with their own tokens, exactly as outside agents do, so
their forecasts are validated, logged and graded the same way. They declare a knowledge cutoff of
2000-01-01 (they use no trained model), so the contamination filter never hides them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction

from leaderboard.models import ApiToken
from leaderboard.services.teams import agent_create, team_ensure, token_create, token_revoke

BASELINE_TEAM = "Hindsight baselines"
RUNNER_TOKEN_NAME = "baseline runner"
NO_MODEL_CUTOFF = date(2000, 1, 1)


@dataclass(frozen=True)
class BaselineSpec:
    name: str
    model_name: str
    tools: str


BASELINES = (
    BaselineSpec("market-follower", "market price", "Submits the latest market price the gateway shows."),
    BaselineSpec("always-half", "constant 0.5", "Submits 0.5 (binary) or a uniform vector (multiple choice)."),
    BaselineSpec(
        "reference-offline",
        "examples/reference_agent.py (offline)",
        "Searches and reads evidence through the gateway; cue-word forecasts; a forecast graph from what it read.",
    ),
)


@transaction.atomic
def baselines_ensure() -> dict[str, str]:
    """The baseline team and agents (created when missing), each with one fresh token; earlier
    runner tokens are revoked so keys never pile up. Returns agent name -> token key; a baseline
    staff retired gets none (and does not run)."""
    team, _ = team_ensure(name=BASELINE_TEAM)
    keys: dict[str, str] = {}
    for spec in BASELINES:
        agent = team.agents.filter(name=spec.name).first()
        if agent is None:
            agent = agent_create(
                team=team,
                name=spec.name,
                model_name=spec.model_name,
                provider="Hindsight",
                knowledge_cutoff=NO_MODEL_CUTOFF,
                tools_description=spec.tools,
                is_baseline=True,
            )
        for old in ApiToken.objects.filter(agent=agent, name=RUNNER_TOKEN_NAME, revoked_at=None):
            token_revoke(token=old)
        if agent.retired_at is not None:
            continue
        keys[spec.name] = token_create(agent=agent, name=RUNNER_TOKEN_NAME, issued_by=ApiToken.IssuedBy.PLATFORM).key
    return keys


def reference_agent_module() -> ModuleType:
    """examples/reference_agent.py, loaded from its file (examples/ is not a package), with
    examples/reference_forecasting.py, which it imports as its sibling."""
    name = "hindsight_reference_agent"
    if name in sys.modules:
        return sys.modules[name]
    examples = Path(settings.BASE_DIR) / "examples"
    _load_module("reference_forecasting", examples / "reference_forecasting.py")
    return _load_module(name, examples / "reference_agent.py")


def _load_module(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # a later call tries again instead of finding half a module
        raise
    return module


class _Client:
    def __init__(self, base_url: str, key: str) -> None:
        self.http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/v1", headers={"Authorization": f"Token {key}"}, timeout=60
        )

    def offered(
        self,
        *,
        limit: int,
        imported_limit: int | None = None,
        types: tuple[str, ...] = (),
        origins: tuple[str, ...] = (),
    ) -> list[dict[str, Any]]:
        """Unpublished replay questions, then open live ones (only of ``origins`` when given); at most
        ``imported_limit`` imported ones per track (a large imported set would otherwise dominate a
        short demo run).

        Replay questions come first, in order of their sessions' simulated dates (the sessions are
        opened here): each replay forecast is then made before the agent reads anything dated after
        it, which would count as a leak (``leaderboard.services.leaks``).
        """
        found: list[dict[str, Any]] = []
        for filters in ({"track": "replay", "status": "resolved"}, {"track": "live", "status": "open"}):
            offset, imported = 0, 0
            while True:
                params: dict[str, Any] = {**filters, "limit": 50, "offset": offset, "origin": list(origins)}
                body = self.http.get("/questions/", params=params).json()
                for q in body["results"]:
                    if types and q["type"] not in types:
                        continue
                    if q["track"] == "replay" and q["outcome_published_at"]:
                        continue  # a published replay question takes no more forecasts
                    if q["origin"] == "imported" and imported_limit is not None:
                        if imported >= imported_limit:
                            continue
                        imported += 1
                    found.append(q)
                if not body.get("next"):
                    break
                offset += len(body["results"])
        found = found[:limit] if limit else found
        dates = {q["id"]: self.session(q)["simulated_date"] for q in found if q["track"] == "replay"}
        return sorted(found, key=lambda q: (q["track"] != "replay", dates.get(q["id"], "")))

    def session(self, question: dict[str, Any]) -> dict[str, Any]:
        response = self.http.post("/replays/", json={"question": question["id"]}).raise_for_status()
        return dict(response.json())

    def scope(self, question: dict[str, Any]) -> dict[str, Any]:
        return {"session": self.session(question)["id"]} if question["track"] == "replay" else {}

    def give_up(self, scope: dict[str, Any]) -> None:
        """Close a replay session the agent will not forecast in (else it stays 'working on' it)."""
        if "session" in scope:
            self.http.delete(f"/replays/{scope['session']}/").raise_for_status()

    def submit(self, body: dict[str, Any]) -> int:
        return self.http.post("/forecasts/", json=body).status_code


def _latest(points: list[dict[str, Any]]) -> dict[str, float]:
    latest: dict[str, tuple[str, float]] = {}
    for p in points:
        if p["outcome"] not in latest or p["time"] >= latest[p["outcome"]][0]:
            latest[p["outcome"]] = (p["time"], float(p["probability"]))
    return {o: v for o, (_, v) in latest.items()}


CHOICE_TYPES = ("binary", "multiple_choice")


def market_follower_run(
    *, base_url: str, key: str, limit: int = 0, imported_limit: int | None = None, origins: tuple[str, ...] = ()
) -> dict[int, int]:
    api = _Client(base_url, key)
    statuses: Counter[int] = Counter()
    for q in api.offered(limit=limit, imported_limit=imported_limit, types=CHOICE_TYPES, origins=origins):
        scope = api.scope(q)
        prices = api.http.get(f"/evidence/prices/{q['id']}/", params=scope)
        latest = _latest(prices.json().get("prices", [])) if prices.status_code == 200 else {}
        if q["type"] == "binary":
            yes = latest.get("Yes", latest.get("YES"))
            if yes is None:
                api.give_up(scope)
                continue
            prediction: dict[str, Any] = {"probability": round(min(1.0, max(0.0, yes)), 4)}
            rationale = f"The market price as of the forecast date was {yes:.3f}."
        else:
            if not all(o in latest for o in q["options"]):
                api.give_up(scope)
                continue
            total = sum(latest[o] for o in q["options"]) or 1.0
            probs = {o: round(latest[o] / total, 6) for o in q["options"]}
            probs[q["options"][0]] = round(1.0 - sum(v for o, v in probs.items() if o != q["options"][0]), 6)
            prediction = {"probabilities": probs}
            rationale = "The market's prices as of the forecast date, normalised."
        statuses[
            api.submit(
                {
                    "question": q["id"],
                    "session": scope.get("session"),
                    "prediction": prediction,
                    "rationale": rationale,
                    "idempotency_key": f"market-{q['id']}-{scope.get('session') or 'live'}",
                }
            )
        ] += 1
    return dict(statuses)


def always_half_run(
    *, base_url: str, key: str, limit: int = 0, imported_limit: int | None = None, origins: tuple[str, ...] = ()
) -> dict[int, int]:
    api = _Client(base_url, key)
    statuses: Counter[int] = Counter()
    for q in api.offered(limit=limit, imported_limit=imported_limit, types=CHOICE_TYPES, origins=origins):
        scope = api.scope(q)
        if q["type"] == "binary":
            prediction: dict[str, Any] = {"probability": 0.5}
        else:
            n = len(q["options"])
            probs = {o: round(1.0 / n, 6) for o in q["options"]}
            probs[q["options"][0]] = round(1.0 - sum(v for o, v in probs.items() if o != q["options"][0]), 6)
            prediction = {"probabilities": probs}
        statuses[
            api.submit(
                {
                    "question": q["id"],
                    "session": scope.get("session"),
                    "prediction": prediction,
                    "rationale": "Always one half: the no-information baseline.",
                    "idempotency_key": f"half-{q['id']}-{scope.get('session') or 'live'}",
                }
            )
        ] += 1
    return dict(statuses)


def reference_offline_run(
    *, base_url: str, key: str, limit: int = 0, imported_limit: int | None = None, origins: tuple[str, ...] = ()
) -> dict[int, int]:
    module = reference_agent_module()
    questions = _Client(base_url, key).offered(limit=limit, imported_limit=imported_limit, origins=origins)
    result: dict[int, int] = module.run(base_url, key, mode="offline", name="reference", questions=questions)
    return result


RUNNERS: dict[str, Callable[..., dict[int, int]]] = {
    "market-follower": market_follower_run,
    "always-half": always_half_run,
    "reference-offline": reference_offline_run,
}


def baselines_run(
    *,
    base_url: str,
    only: list[str] | None = None,
    limit: int = 0,
    imported_limit: int | None = None,
    origins: tuple[str, ...] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[int, int]]:
    """Run the baseline agents against the site at ``base_url`` over HTTP (on the questions of
    ``origins`` only, when given); per agent, the forecast submissions by HTTP status."""
    keys = baselines_ensure()
    results: dict[str, dict[int, int]] = {}
    for name, runner in RUNNERS.items():
        if (only and name not in only) or name not in keys:
            continue
        results[name] = runner(
            base_url=base_url, key=keys[name], limit=limit, imported_limit=imported_limit, origins=origins
        )
        if log is not None:
            log(f"  {name}: {results[name]}")
    return results
