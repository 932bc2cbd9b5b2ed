"""Manifold: markets and bets from API v0.

Formats (Manifold's API documentation, docs/docs/api.md in the manifoldmarkets/manifold
repository, and common/src/api/schema.ts):

* ``GET {api}/v0/markets?limit=N&before=ID`` -> a JSON list of ``LiteMarket``, newest first;
  the next page starts ``before`` the last id of this one.
* ``GET {api}/v0/market/{id}`` -> a ``FullMarket`` (a LiteMarket plus ``answers`` for
  multiple-choice markets: ``[{"id", "text", "probability"}]``).
* A LiteMarket has ``id``, ``question``, ``url``, ``outcomeType`` (BINARY, MULTIPLE_CHOICE,
  PSEUDO_NUMERIC, POLL, ...), ``createdTime``/``closeTime``/``resolutionTime`` (ms since the
  epoch), ``probability`` (binary), ``totalLiquidity``, ``volume``, ``uniqueBettorCount``,
  ``isResolved`` and ``resolution``: YES, NO, MKT or CANCEL for binary markets; an answer id,
  MKT or CANCEL for multiple-choice ones (``resolutionProbability`` goes with MKT).
* ``GET {api}/v0/bets?contractId=ID&limit=N&before=BET_ID[&afterTime=MS]`` -> a list of bets,
  newest first, each with ``id``, ``createdTime`` (ms), ``probAfter`` and, on multiple-choice
  markets, ``answerId``. ``probAfter`` after each bet rebuilds the price path.

A listed market with a missing or mistyped field is skipped and counted (user-created markets
vary widely); a page that is not a list fails the poll.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from ingestion.markets import (
    NO,
    YES,
    Fields,
    JsonGetter,
    Listing,
    MarketFormatError,
    MarketRecord,
    MarketState,
    PriceRecord,
    QuestionType,
    option_int,
    probability,
    with_price_path,
)

PLATFORM = "manifold"


def parse_market(payload: Any, *, now: datetime) -> MarketRecord:
    label = "Manifold market"
    if isinstance(payload, Mapping) and isinstance(payload.get("id"), str):
        label += f" {payload['id']}"
    f = Fields(payload, label=label)
    market_id = f.string("id")
    outcome_type = f.string("outcomeType")
    is_resolved = f.boolean("isResolved")
    resolution = f.string("resolution", required=False)
    resolved_at = f.millis("resolutionTime")
    outcomes: list[str] = []
    keys: dict[str, str] = {}
    snapshot: list[PriceRecord] = []
    question_type: QuestionType = ""
    if outcome_type == "BINARY":
        question_type = "binary"
        outcomes = [YES, NO]
        prob = f.number("probability", required=True)
        assert prob is not None
        snapshot = [PriceRecord(outcome=YES, time=now, probability=probability(prob, fields=f, name="probability"))]
        state = _binary_state(f, is_resolved=is_resolved, resolution=resolution, resolved_at=resolved_at)
    elif outcome_type == "MULTIPLE_CHOICE":
        # Independent answers (shouldAnswersSumToOne false) are several binary markets in one;
        # they do not form one multiple-choice question.
        if f.boolean("shouldAnswersSumToOne", required=False, default=True):
            question_type = "multiple_choice"
        answers = f.list("answers", required=False)
        for index, answer in enumerate(answers):
            a = Fields(answer, label=f"{label} answer {index}")
            text = a.string("text").strip()
            if text in keys:
                raise f.error("answers", f"names the answer {text!r} twice")
            keys[text] = a.string("id")
            outcomes.append(text)
            prob = a.number("probability")
            if prob is not None:
                snapshot.append(
                    PriceRecord(outcome=text, time=now, probability=probability(prob, fields=a, name="probability"))
                )
        state = _choice_state(
            f,
            is_resolved=is_resolved,
            resolution=resolution,
            resolved_at=resolved_at,
            keys=keys,
            loaded="answers" in f.payload,
        )
    else:
        state = MarketState.open()
    bettors = f.integer("uniqueBettorCount")
    return MarketRecord(
        platform=PLATFORM,
        external_id=market_id,
        title=f.string("question").strip(),
        outcomes=outcomes,
        question_type=question_type,
        url=f.string("url", required=False),
        open_at=f.millis("createdTime"),
        close_at=f.millis("closeTime"),
        status=("resolved:" + resolution) if is_resolved else "open",
        liquidity=f.number("totalLiquidity"),
        volume=f.number("volume"),
        bettors=bettors,
        description=f.string("textDescription", required=False),
        state=state,
        raw=dict(f.payload),
        prices=snapshot,
        history_keys=keys,
        prices_are_snapshot=True,
    )


def needs_detail(record: MarketRecord) -> bool:
    """A multiple-choice market from the listing: its answers come only with /v0/market/{id}."""
    return record.question_type == "multiple_choice" and "answers" not in record.raw


def _binary_state(f: Fields, *, is_resolved: bool, resolution: str, resolved_at: datetime | None) -> MarketState:
    if not is_resolved:
        return MarketState.open()
    if resolution in ("YES", "NO"):
        return MarketState(kind="resolved", outcome=YES if resolution == "YES" else NO, resolved_at=resolved_at)
    if resolution == "MKT":
        prob = f.number("resolutionProbability")
        at = f" at probability {prob:g}" if prob is not None else ""
        return MarketState(
            kind="annulled",
            resolved_at=resolved_at,
            reason=f"Manifold resolved the market to MKT{at} instead of YES or NO",
        )
    if resolution == "CANCEL":
        return MarketState(kind="annulled", resolved_at=resolved_at, reason="Manifold cancelled the market (N/A)")
    raise f.error("resolution", f"should be YES, NO, MKT or CANCEL on a resolved binary market, got {resolution!r}")


def _choice_state(
    f: Fields,
    *,
    is_resolved: bool,
    resolution: str,
    resolved_at: datetime | None,
    keys: dict[str, str],
    loaded: bool,
) -> MarketState:
    if not is_resolved:
        return MarketState.open()
    if resolution == "MKT":
        return MarketState(
            kind="annulled", resolved_at=resolved_at, reason="Manifold resolved the market to several answers (MKT)"
        )
    if resolution == "CANCEL":
        return MarketState(kind="annulled", resolved_at=resolved_at, reason="Manifold cancelled the market (N/A)")
    if not loaded:
        return MarketState.held("answers not loaded")
    by_id = {answer_id: text for text, answer_id in keys.items()}
    if resolution not in by_id:
        raise f.error("resolution", f"should be an answer id, MKT or CANCEL, got {resolution!r}")
    return MarketState(kind="resolved", outcome=by_id[resolution], resolved_at=resolved_at)


class ManifoldClient:
    # The source options this client reads (the selection options are the store's).
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"page_size", "max_pages", "bets_page_size", "bets_max_pages"})

    def __init__(self, *, base_url: str, options: Mapping[str, Any], get: JsonGetter) -> None:
        self.base_url = base_url.rstrip("/")
        self.get = get
        self.page_size = option_int(options, "page_size", 500)
        self.max_pages = option_int(options, "max_pages", 10)
        self.bet_page_size = option_int(options, "bets_page_size", 1000)
        self.bet_max_pages = option_int(options, "bets_max_pages", 5)

    def list_markets(self, *, now: datetime, listing: Listing) -> None:
        before = ""
        for page in range(self.max_pages):
            params: dict[str, Any] = {"limit": self.page_size}
            if before:
                params["before"] = before
            items = self.get(f"{self.base_url}/v0/markets", params)
            listing.pages += 1
            if not isinstance(items, list):
                raise MarketFormatError(f"Manifold /v0/markets page {page + 1}: expected a JSON list of markets")
            for item in items:
                try:
                    listing.records.append(parse_market(item, now=now))
                except MarketFormatError as exc:
                    listing.skipped.append(str(exc))
            if len(items) < self.page_size:
                return
            last = items[-1]
            last_id = last.get("id") if isinstance(last, Mapping) else None
            if not isinstance(last_id, str) or not last_id or last_id == before:
                raise MarketFormatError(f"Manifold /v0/markets page {page + 1}: the last market has no id to page from")
            before = last_id

    def market(self, external_id: str, *, now: datetime) -> MarketRecord:
        return parse_market(self.get(f"{self.base_url}/v0/market/{external_id}", None), now=now)

    def with_history(self, record: MarketRecord, *, since: datetime | None, now: datetime) -> MarketRecord:
        """The record with the price path rebuilt from its bets (``probAfter``)."""
        label = f"Manifold market {record.external_id} bets"
        answers = {answer_id: text for text, answer_id in record.history_keys.items()}
        points: list[PriceRecord] = []
        before = ""
        for page in range(self.bet_max_pages):
            params: dict[str, Any] = {"contractId": record.external_id, "limit": self.bet_page_size}
            if before:
                params["before"] = before
            if since is not None:
                params["afterTime"] = int(since.timestamp() * 1000)
            bets = self.get(f"{self.base_url}/v0/bets", params)
            if not isinstance(bets, list):
                raise MarketFormatError(f"{label} page {page + 1}: expected a JSON list of bets")
            for index, bet in enumerate(bets):
                b = Fields(bet, label=f"{label} page {page + 1} item {index}")
                at = b.millis("createdTime", required=True)
                prob = b.number("probAfter", required=True)
                assert at is not None and prob is not None
                if record.question_type == "binary":
                    outcome = YES
                else:
                    answer_id = b.string("answerId")
                    if answer_id not in answers:
                        raise b.error("answerId", f"names no answer of the market: {answer_id!r}")
                    outcome = answers[answer_id]
                points.append(
                    PriceRecord(outcome=outcome, time=at, probability=probability(prob, fields=b, name="probAfter"))
                )
            if len(bets) < self.bet_page_size:
                break
            last_id = bets[-1].get("id") if isinstance(bets[-1], Mapping) else None
            if not isinstance(last_id, str) or not last_id:
                raise MarketFormatError(f"{label} page {page + 1}: the last bet has no id to page from")
            before = last_id
        traded = {p.outcome for p in points}
        empty = {p.outcome for p in record.prices if p.outcome not in traded}
        return with_price_path(record, points=points, empty=empty, first=since is None)
