"""How the reference agent (``reference_agent.py``) forecasts: what it reads for a question, the
forecast graph it builds from that, and its offline and LLM forecasts. Like the agent, it needs only
the client package (``hindsight_client``) and, for the LLM mode, ``openai``."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from hindsight_client import ApiError, Article, Client, Event, NotFound, PriceHistory, Question, ReplaySession

# A self-contained copy on purpose: the agent needs only the client package (hindsight_client), not
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
        lo, hi = question.lower_bound, question.upper_bound
        numbers = [float(n.replace(" ", "")) for n in re.findall(r"\d[\d ]{2,}\d", question.background)]
        # A planned figure inside the question's range (a year in the background is not one); else its middle.
        planned = [n for n in numbers if (lo is None or n >= lo) and (hi is None or n <= hi)]
        base = planned[0] if planned else (lo + hi) / 2 if lo is not None and hi is not None else 100.0
        value = round(base * (1 + 0.04 * max(-5, min(5, balance))))
        value = min(hi if hi is not None else value, max(lo if lo is not None else value, value))
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
        middle = date(year, month, 15)  # day and week questions: the middle of that month
        if question.granularity == "day":
            period = middle.isoformat()
        elif question.granularity == "week":
            period = f"{middle.isocalendar().year}-W{middle.isocalendar().week:02d}"
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
