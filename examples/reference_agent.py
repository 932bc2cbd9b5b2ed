"""Hindsight's reference agent: a small, complete forecasting agent that uses only the public API.

What it does, for every question it is offered:

1. lists open live questions and replay questions (``GET /api/v1/questions/``);
2. for a replay question opens its replay session (``POST /api/v1/replays/``): every evidence call
   made with the session is answered as of the session's simulated date, never later;
3. searches the archive (``GET /api/v1/evidence/articles/?q=...``) and reads the best hits
   (``GET /api/v1/evidence/articles/{id}/``); for relation questions it also queries structured
   events, and for market questions the price history;
4. builds a forecast graph from what it read: one event per story (near-duplicate headlines merged),
   linked in date order;
5. forecasts, and submits the forecast with its sources (the articles it read), a rationale and the
   graph (``POST /api/v1/forecasts/``), with an idempotency key so a rerun submits nothing twice.

Two modes:

* ``--mode offline`` (default, deterministic): word cues in the headlines push a probability up or
  down; the latest market price is blended in when the question has a market; planned figures and
  dates in the background are adjusted by the balance of good and bad news.
* ``--mode llm``: the same evidence goes to any OpenAI-compatible server through the ``openai``
  client (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``--model`` or ``HINDSIGHT_AGENT_MODEL``); its
  JSON answer is checked and the offline forecast is used when the answer is unusable.

Usage::

    python examples/reference_agent.py --base-url http://127.0.0.1:8000 --token <TOKEN> [--mode offline|llm]
        [--track live|replay|all] [--limit N]

Only ``httpx`` (and ``openai`` for the LLM mode) are needed; nothing from Hindsight is imported.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

# A self-contained copy on purpose: this script talks to Hindsight over HTTP only and must run
# without the project installed, so it cannot import the project's stop-word list (ingestion/text.py).
STOPWORDS = set(
    [
        "a",
        "about",
        "after",
        "all",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "before",
        "between",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "over",
        "that",
        "the",
        "their",
        "this",
        "to",
        "towards",
        "under",
        "until",
        "was",
        "what",
        "when",
        "which",
        "while",
        "who",
        "will",
        "with",
        "would",
        "fictional",
        "coded",
        "take",
        "month",
        "many",
        "open",
        "report",
    ]
)
GOOD = set(
    [
        "approve",
        "approves",
        "approved",
        "pass",
        "passes",
        "win",
        "wins",
        "won",
        "agree",
        "agrees",
        "agreed",
        "launch",
        "launches",
        "launched",
        "confirm",
        "confirms",
        "confirmed",
        "sign",
        "signs",
        "signed",
        "succeed",
        "succeeds",
        "success",
        "complete",
        "completes",
        "completed",
        "secure",
        "secures",
        "secured",
        "back",
        "backs",
        "backed",
        "endorse",
        "endorses",
        "endorsed",
        "clear",
        "clears",
        "cleared",
        "accept",
        "accepts",
        "accepted",
        "grant",
        "grants",
        "granted",
        "finish",
        "finishes",
        "ahead",
        "early",
        "gain",
        "gains",
        "gains",
        "leads",
        "lead",
        "surge",
        "surges",
        "reopen",
        "reopens",
        "praise",
        "praises",
        "cooperation",
        "aid",
        "deal",
        "passes",
        "record",
    ]
)
BAD = set(
    [
        "reject",
        "rejects",
        "rejected",
        "fail",
        "fails",
        "failed",
        "delay",
        "delays",
        "delayed",
        "block",
        "blocks",
        "blocked",
        "oppose",
        "opposes",
        "opposed",
        "halt",
        "halts",
        "halted",
        "strike",
        "withdraw",
        "withdraws",
        "withdrawn",
        "refuses",
        "refuse",
        "warn",
        "warns",
        "suspend",
        "suspends",
        "stall",
        "stalls",
        "stalled",
        "postpone",
        "postpones",
        "postponed",
        "cancel",
        "cancels",
        "cancelled",
        "shortage",
        "slows",
        "cracks",
        "flood",
        "scandal",
        "slips",
        "gaffe",
        "accuses",
        "threatens",
        "sanctions",
        "detains",
        "denounces",
        "defies",
        "closes",
        "closure",
        "misses",
        "loses",
        "drop",
        "drops",
        "cut",
        "cuts",
    ]
)
MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        1,
    )
}


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def cue_balance(text: str) -> int:
    tokens = re.findall(r"[a-z]+", text.lower())
    return sum(t in GOOD for t in tokens) - sum(t in BAD for t in tokens)


@dataclass
class Evidence:
    articles: list[dict[str, Any]] = field(default_factory=list)  # read in full
    events: list[dict[str, Any]] = field(default_factory=list)  # structured events (relation)
    prices: list[dict[str, Any]] = field(default_factory=list)  # market price history


class Hindsight:
    """The public API, as a thin httpx client."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/v1", headers={"Authorization": f"Token {token}"}, timeout=60
        )

    def questions(self, **filters: str) -> list[dict[str, Any]]:
        found, offset = [], 0
        while True:
            page = self.http.get("/questions/", params={**filters, "limit": 50, "offset": offset}).raise_for_status()
            body = page.json()
            results = body["results"] if isinstance(body, dict) else body
            found.extend(results)
            if not isinstance(body, dict) or not body.get("next"):
                return found
            offset += len(results)

    def open_session(self, question_id: int) -> dict[str, Any]:
        return self.http.post("/replays/", json={"question": question_id}).raise_for_status().json()

    def gather(self, question: dict[str, Any], scope: dict[str, Any], read: int = 8) -> Evidence:
        evidence = Evidence()
        query = " or ".join(dict.fromkeys(words(question["title"])))
        hits = self.http.get("/evidence/articles/", params={"q": query, "limit": 20, **scope}).raise_for_status()
        for hit in hits.json()["results"][:read]:
            article = self.http.get(f"/evidence/articles/{hit['id']}/", params=scope)
            if article.status_code == 200:
                evidence.articles.append(article.json())
        if question["type"] == "relation":
            params = {"subject": question["subject"], "object": question["object"], "limit": 100, **scope}
            evidence.events = self.http.get("/evidence/events/", params=params).raise_for_status().json()["events"]
        if question["type"] in ("binary", "multiple_choice"):
            session = {"session": scope["session"]} if "session" in scope else {}
            prices = self.http.get(f"/evidence/prices/{question['id']}/", params=session)
            if prices.status_code == 200:
                evidence.prices = prices.json()["prices"]
        return evidence

    def submit(self, forecast: dict[str, Any]) -> httpx.Response:
        return self.http.post("/forecasts/", json=forecast)


# ------------------------------------------------------------------------------------ the graph


def forecast_graph(evidence: Evidence, limit: int = 12) -> dict[str, Any]:
    """One event per story, near-duplicate headlines merged, chained in date order."""
    events: list[dict[str, Any]] = []
    seen: list[set[str]] = []
    for article in sorted(evidence.articles, key=lambda a: a["published_at"]):
        tokens = set(
            words(re.sub(r"^(update|breaking):\s*|, sources say$| - analysis$", "", article["title"], flags=re.I))
        )
        if any(len(tokens & s) / max(1, len(tokens | s)) >= 0.5 for s in seen):
            continue
        seen.append(tokens)
        title = re.sub(r"^(Update|Breaking):\s*|, sources say$| - analysis$", "", article["title"])
        events.append(
            {
                "id": f"e{len(events) + 1}",
                "title": title,
                "description": article.get("summary", "")[:300],
                "date": article["published_at"][:10],
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


def _latest_prices(evidence: Evidence) -> dict[str, float]:
    latest: dict[str, tuple[str, float]] = {}
    for point in evidence.prices:
        if point["outcome"] not in latest or point["time"] >= latest[point["outcome"]][0]:
            latest[point["outcome"]] = (point["time"], point["probability"])
    return {o: p for o, (_, p) in latest.items()}


def offline_prediction(question: dict[str, Any], evidence: Evidence) -> tuple[dict[str, Any], str]:
    qtype = question["type"]
    headlines = [a["title"] for a in evidence.articles]
    balance = sum(cue_balance(h) for h in headlines)
    if qtype == "binary":
        adverse = cue_balance(question["title"]) < 0
        p = 1 / (1 + math.exp(-0.35 * (-balance if adverse else balance)))
        market = _latest_prices(evidence)
        yes = market.get("Yes", market.get("YES"))
        if yes is not None:
            p = (p + yes) / 2
        p = min(0.95, max(0.05, p))
        return {"probability": round(p, 3)}, f"News balance {balance:+d} over {len(headlines)} articles" + (
            f", market at {yes:.2f}" if yes is not None else ""
        )
    if qtype == "multiple_choice":
        options = question["options"]
        score = Counter({o: 0.0 for o in options})
        for h in headlines:
            for o in options:
                if o.lower() in h.lower():
                    score[o] += 1 if cue_balance(h) >= 0 else -1
        weights = {o: math.exp(0.6 * score[o]) for o in options}
        market = _latest_prices(evidence)
        if all(o in market for o in options):
            weights = {o: weights[o] / sum(weights.values()) + market[o] for o in options}
        total = sum(weights.values())
        probs = {o: weights[o] / total for o in options}
        probs = {o: round(v, 4) for o, v in probs.items()}
        probs[options[0]] = round(1 - sum(v for o, v in probs.items() if o != options[0]), 4)
        return {"probabilities": probs}, "Mentions weighted by good and bad news" + (
            " and market prices" if market else ""
        )
    if qtype == "quantity":
        numbers = [float(n.replace(" ", "")) for n in re.findall(r"\d[\d ]{2,}\d", question.get("background", ""))]
        base = numbers[0] if numbers else 100.0
        value = round(base * (1 + 0.04 * max(-5, min(5, balance))))
        return {"value": value}, f"Planned {base:g}, adjusted {4 * max(-5, min(5, balance)):+d}% for the news balance"
    if qtype == "timeframe":
        match = re.search(r"in (\w+) (\d{4})", question.get("background", ""))
        year, month = (
            (int(match.group(2)), MONTHS.get(match.group(1).lower(), 6))
            if match
            else (int(question["close_at"][:4]), int(question["close_at"][5:7]))
        )
        shift = 1 if balance < -1 else (-1 if balance > 2 else 0)
        month += shift
        year, month = (year + (month - 1) // 12, (month - 1) % 12 + 1)
        period = f"{year}" if question["granularity"] == "year" else f"{year}-{month:02d}"
        if question["granularity"] == "quarter":
            period = f"{year}-Q{(month - 1) // 3 + 1}"
        return {"period": period}, f"Planned date shifted {shift:+d} month(s) for the news balance {balance:+d}"
    if qtype == "relation":
        recent = evidence.events[-10:]
        codes = Counter(e["relation"] for e in recent)
        cooperative = sum(n for c, n in codes.items() if c[:2] <= "08")
        conflict = sum(codes.values()) - cooperative
        wanted = [c for c, _ in codes.most_common() if (c[:2] <= "08") == (cooperative >= conflict)][:3]
        relations: dict[str, list[str]] = {}
        for code in wanted:
            relations.setdefault(code[:2], []).append(code)
        return {"relations": relations}, f"{cooperative} cooperative and {conflict} conflictual recent events"
    if qtype == "open_ended":
        recent = [a["title"] for a in sorted(evidence.articles, key=lambda a: a["published_at"])][-4:]
        return {"events": recent or ["Talks continue"]}, "The latest developments continue"
    raise ValueError(f"unknown question type {qtype}")


# ------------------------------------------------------------------------------------ LLM forecasts


def llm_prediction(question: dict[str, Any], evidence: Evidence, model: str) -> tuple[dict[str, Any], str] | None:
    """Ask an OpenAI-compatible model; None when its answer is unusable (the caller falls back)."""
    from openai import OpenAI

    client = OpenAI()
    shapes = {
        "binary": '{"probability": 0.0-1.0}',
        "multiple_choice": '{"probabilities": {OPTION: p, ...}} summing to 1',
        "quantity": '{"value": number}',
        "timeframe": f'{{"period": "..."}} at granularity {question.get("granularity")}',
        "relation": '{"relations": {"04": ["042"], ...}} with CAMEO codes',
        "open_ended": '{"events": ["...", ...]}',
    }
    reading = "\n".join(
        f"- {a['published_at'][:10]} {a['title']}: {a.get('summary', '')[:200]}" for a in evidence.articles
    )
    prompt = (
        f"Question: {question['title']}\nType: {question['type']}\nOptions: {question.get('options')}\n"
        f"Background: {question.get('background', '')}\nCriteria: {question.get('resolution_criteria', '')}\n"
        f"Evidence read (all published before the forecast date):\n{reading}\n"
        f'Answer with JSON only: {{"prediction": {shapes[question["type"]]}, "rationale": "..."}}'
    )
    try:
        answer = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}], temperature=0
        )
        text = answer.choices[0].message.content or ""
        data = json.loads(text[text.find("{") : text.rfind("}") + 1])
        return dict(data["prediction"]), str(data.get("rationale", ""))[:2000]
    except Exception as exc:  # any model or parsing failure: fall back to the offline forecast
        print(f"  llm answer unusable ({type(exc).__name__}: {exc}); using the offline forecast", file=sys.stderr)
        return None


# ------------------------------------------------------------------------------------ the loop


def forecast_question(api: Hindsight, question: dict[str, Any], *, mode: str, model: str, name: str) -> httpx.Response:
    session = api.open_session(question["id"]) if question["track"] == "replay" else None
    scope = {"session": session["id"]} if session else {"question": question["id"]}
    evidence = api.gather(question, scope)
    prediction, rationale = offline_prediction(question, evidence)
    if mode == "llm":
        answer = llm_prediction(question, evidence, model)
        if answer is not None:
            prediction, rationale = answer
    body = {
        "question": question["id"],
        "session": session["id"] if session else None,
        "prediction": prediction,
        "sources": [a["id"] for a in evidence.articles],
        "rationale": f"{rationale}. Read {len(evidence.articles)} articles.",
        "graph": forecast_graph(evidence),
        "idempotency_key": f"{name}-{question['id']}-{session['id'] if session else 'live'}",
    }
    response = api.submit(body)
    if response.status_code == 400 and mode == "llm":
        body["prediction"], _ = offline_prediction(question, evidence)
        body["idempotency_key"] += "-offline"
        response = api.submit(body)
    return response


def run(
    base_url: str,
    token: str,
    *,
    mode: str = "offline",
    track: str = "all",
    limit: int = 0,
    model: str = "",
    name: str = "reference",
    questions: list[dict[str, Any]] | None = None,
) -> dict[int, int]:
    """Forecast every offered question (or the given ones) once; returns counts by HTTP status."""
    api = Hindsight(base_url, token)
    if questions is None:
        questions = []
        if track in ("live", "all"):
            questions += api.questions(track="live", status="open")
        if track in ("replay", "all"):
            questions += api.questions(track="replay", status="resolved")
    if limit:
        questions = questions[:limit]
    statuses: Counter[int] = Counter()
    for question in questions:
        response = forecast_question(api, question, mode=mode, model=model, name=name)
        statuses[response.status_code] += 1
        if response.status_code >= 400:
            print(f"  question {question['id']}: {response.status_code} {response.text[:200]}", file=sys.stderr)
    return dict(statuses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("HINDSIGHT_TOKEN"))
    parser.add_argument("--mode", choices=("offline", "llm"), default="offline")
    parser.add_argument("--track", choices=("live", "replay", "all"), default="all")
    parser.add_argument("--limit", type=int, default=0, help="forecast at most N questions (0: all)")
    parser.add_argument("--model", default=os.environ.get("HINDSIGHT_AGENT_MODEL", "gpt-4o-mini"))
    args = parser.parse_args()
    if not args.token:
        parser.error("give --token or set HINDSIGHT_TOKEN (python manage.py create_agent prints one)")
    print(run(args.base_url, args.token, mode=args.mode, track=args.track, limit=args.limit, model=args.model))


if __name__ == "__main__":
    main()
