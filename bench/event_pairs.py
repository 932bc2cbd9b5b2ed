"""Every event matcher on the labelled event pairs: the benchmark (grading/benchmarks/event_pairs.jsonl)
and the real pairs (grading/benchmarks/real_pairs/: ``dev`` and the held-out ``test``).

Each pair is scored as a question of its own: ``a`` is the hindsight event, ``b`` the forecast
event, each on its own date (the benchmark's pairs share one date), so a pair matches exactly when
the matcher's own rule (similarity, guards, date gate) accepts it. Prints one JSON object: per set
and matcher, precision, recall and F1 of "match" overall and per category (categories whose pairs
are all "no match" report only their false-match rate), and the false-match rate on the traps
(benchmark: negated, reversed, stuffed; real pairs: negated, reversed, swapped roles, different
quantity, other institution, stuffed).

    .venv/bin/python bench/event_pairs.py                         # the matchers installed here
    .venv/bin/python bench/event_pairs.py --matchers hybrid,guarded --sets test
    .venv/bin/python bench/event_pairs.py --table                 # Markdown tables instead of JSON

The semantic matchers need ``requirements-semantic.txt``; they are skipped (and say so) without it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from grading.benchmarks import REAL_TRAPS, load_event_pairs, load_real_pairs  # noqa: E402
from grading.scoring.guarded import GuardedReferenceIndex  # noqa: E402
from grading.scoring.matchers import MATCHER_SETTINGS, build_reference_index  # noqa: E402
from grading.scoring.matching import Event  # noqa: E402
from grading.scoring.semantic import SemanticMatcherUnavailable  # noqa: E402

TRAPS = ("negated", "reversed", "stuffed")
DAY = dt.date(2026, 1, 15)
SETS = ("benchmark", "dev", "test")
# The guarded matcher with its hand-written rules instead of the learned decision (version 1.0's
# guards, as fixed since), and the learned decision without the guards it keeps.
RULES = "guarded-rules"
LEARNED_ONLY = "guarded-learned-only"
VARIANTS = {RULES: "rules", LEARNED_ONLY: "learned-only"}


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | None]:
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * p * r / (p + r) if p is not None and r is not None and p + r else None
    return {"precision": p, "recall": r, "f1": f1}


def _date(pair: dict[str, Any], side: str) -> dt.date:
    return dt.date.fromisoformat(pair[f"{side}_date"]) if f"{side}_date" in pair else DAY


def run_matcher(name: str, pairs: list[dict[str, Any]], traps: tuple[str, ...] = TRAPS) -> dict[str, Any]:
    settings = MATCHER_SETTINGS["guarded" if name in VARIANTS else name]()
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
    start = time.perf_counter()
    for pair in pairs:
        a_date, b_date = _date(pair, "a"), _date(pair, "b")
        reference = [Event(id="a", title=pair["a"], date=a_date, magnitude=1.0, confidence=1.0, has_impact=True)]
        index = (
            GuardedReferenceIndex(reference, settings, decision=VARIANTS[name])
            if name in VARIANTS
            else build_reference_index(reference, settings)
        )
        matched = bool(index.score([Event(id="b", title=pair["b"], date=b_date)]).matches)
        truth = pair["label"] == "match"
        key = ("tp" if truth else "fp") if matched else ("fn" if truth else "tn")
        counts[pair["category"]][key] += 1
        counts["overall"][key] += 1
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"seconds": round(seconds, 2)}
    for category, c in sorted(counts.items()):
        negatives = c["fp"] + c["tn"]
        row: dict[str, Any] = {"pairs": sum(c.values()), **_prf(c["tp"], c["fp"], c["fn"])}
        row["false_match_rate"] = c["fp"] / negatives if negatives else None
        out[category] = row
    trap = [counts[t] for t in traps if t in counts]
    trap_neg = sum(c["fp"] + c["tn"] for c in trap)
    out["traps_false_match_rate"] = sum(c["fp"] for c in trap) / trap_neg if trap_neg else None
    return out


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(results: dict[str, Any]) -> str:
    names = [n for n, r in results.items() if "error" not in r]
    categories = sorted({c for n in names for c in results[n] if isinstance(results[n][c], dict)} - {"overall"})
    lines = ["| category (pairs) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for category in ["overall", *categories]:
        first = results[names[0]][category]
        label = f"{category} ({first['pairs']})"
        cells = []
        for n in names:
            row = results[n][category]
            if category == "overall":
                cells.append(f"P {_cell(row['precision'])} R {_cell(row['recall'])} F1 {_cell(row['f1'])}")
            elif row["false_match_rate"] is None:  # every pair is "match"
                cells.append(f"R {_cell(row['recall'])}")
            elif row["recall"] is None:  # every pair is "no match"
                cells.append(f"FM {_cell(row['false_match_rate'])}")
            else:
                cells.append(f"F1 {_cell(row['f1'])}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append(
        "| traps: false matches | " + " | ".join(_cell(results[n]["traps_false_match_rate"]) for n in names) + " |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--matchers",
        default=",".join(["guarded", LEARNED_ONLY, RULES, *(m for m in MATCHER_SETTINGS if m != "guarded")]),
        help=f"Comma-separated matcher names ({RULES}: the guarded matcher's hand-written rules alone, "
        f"version 1.0's guards as fixed since; {LEARNED_ONLY}: its learned decision without the guards it keeps).",
    )
    parser.add_argument("--sets", default=",".join(SETS), help="Comma-separated sets: benchmark, dev, test.")
    parser.add_argument("--table", action="store_true", help="Print Markdown tables.")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for name_of_set in args.sets.split(","):
        pairs = load_event_pairs() if name_of_set == "benchmark" else load_real_pairs(name_of_set)
        traps = TRAPS if name_of_set == "benchmark" else REAL_TRAPS
        results: dict[str, Any] = {}
        for name in args.matchers.split(","):
            try:
                results[name] = run_matcher(name, pairs, traps)
            except SemanticMatcherUnavailable as exc:
                results[name] = {"error": str(exc)}
        out[name_of_set] = {"pairs": len(pairs), "matchers": results}
        if args.table:
            print(f"\n{name_of_set} ({len(pairs)} pairs)\n\n{table(results)}")
    if not args.table:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
