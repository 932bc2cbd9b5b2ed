"""MIRAI relation forecasting metrics (MIRAI, Section 2.3; docs/methods.md).

Reproduces the official evaluation script (``agent_evaluation/eval.py`` of the MIRAI repository):

* **Sanitisation** of a forecast dict ``{first-level code: [second-level codes]}``: keys that are not
  valid first-level codes are dropped together with all their children; a child is kept only when it
  is a valid second-level code *of that key* (three-digit code in ``table[key]`` starting with the
  key). A valid key with an empty (or non-list) value still counts as a first-level prediction.
  Duplicates collapse. Anything that is not a mapping sanitises to the empty answer.
* **P/R/F1 per question** between predicted and gold code sets, at first and second level, as
  shares on ``[0, 1]`` like every share Hindsight grades (MIRAI's script prints them multiplied by
  100). ``P = TP/(TP+FP)`` and ``R = TP/(TP+FN)`` are 0 when their denominator is 0 and
  ``F1 = 2PR/(P+R)`` is 0 when ``P + R = 0`` (so an empty forecast scores 0/0/0). The script also
  reports P/R/F1 on the deduplicated binary and quad *class* sets; we report them too.
* **KL divergence** ``KL(gold || pred) = sum_i P(i) ln(P(i)/Q(i))`` over the binary classes
  (01-08 mediation/cooperation vs 09-20 conflict) and the quad classes (01-04 verbal cooperation,
  05-08 material cooperation, 09-16 verbal conflict, 17-20 material conflict). ``P`` and ``Q`` are the
  frequencies of the classes of the *first-level codes* of the gold answer and of the (sanitised)
  prediction: each distinct first-level code contributes one count to its class, divided by the
  number of first-level codes (all zeros when there are none). ``eps = 1e-10`` is then added to every
  class probability of both distributions (without renormalising) and the natural log is used.
* **Macro average**: the unweighted mean of the per-question values.

The CAMEO table (first-level code -> set of its second-level codes) is a parameter: the data file is
shipped separately.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Final

from grading.scoring.aggregate import macro_average, safe_ratio

__all__ = [
    "BINARY_CLASSES",
    "KL_EPSILON",
    "QUAD_CLASSES",
    "CameoTable",
    "RelationAnswer",
    "RelationPRF",
    "RelationScore",
    "binary_class",
    "class_distribution",
    "kl_divergence",
    "macro_average_relation",
    "prf",
    "quad_class",
    "relation_answer_from_codes",
    "sanitize_relation",
    "score_relation",
    "score_relation_answers",
    "validate_cameo_table",
]

CameoTable = Mapping[str, AbstractSet[str]]
"""First-level CAMEO code ("01".."20") -> set of its second-level codes ("010", "011", ...)."""

KL_EPSILON: Final = 1e-10

BINARY_CLASSES: Final[tuple[str, ...]] = ("mediation", "conflict")
QUAD_CLASSES: Final[tuple[str, ...]] = (
    "verbal cooperation",
    "material cooperation",
    "verbal conflict",
    "material conflict",
)


def _first_level_number(code: str) -> int:
    if len(code) != 2 or not code.isdigit() or not 1 <= int(code) <= 20:
        raise ValueError(f"not a first-level CAMEO code: {code!r}")
    return int(code)


def binary_class(first_level: str) -> str:
    """``mediation`` for 01-08, ``conflict`` for 09-20."""
    return BINARY_CLASSES[0] if _first_level_number(first_level) <= 8 else BINARY_CLASSES[1]


def quad_class(first_level: str) -> str:
    """01-04 verbal cooperation, 05-08 material cooperation, 09-16 verbal conflict, 17-20 material conflict."""
    n = _first_level_number(first_level)
    if n <= 4:
        return QUAD_CLASSES[0]
    if n <= 8:
        return QUAD_CLASSES[1]
    if n <= 16:
        return QUAD_CLASSES[2]
    return QUAD_CLASSES[3]


def validate_cameo_table(table: CameoTable) -> None:
    """Raise ``ValueError`` unless every key is "01".."20" and every child a 3-digit code under its key."""
    problems: list[str] = []
    for key, children in table.items():
        try:
            _first_level_number(key)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        bad = sorted(c for c in children if not (len(c) == 3 and c.isdigit() and c.startswith(key)))
        if bad:
            problems.append(f"children of {key!r} that are not its second-level codes: {', '.join(bad)}")
    if problems:
        raise ValueError("invalid CAMEO table: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class RelationAnswer:
    """A sanitised relation answer: the sets of first-level and second-level codes."""

    first_level: frozenset[str]
    second_level: frozenset[str]

    def as_dict(self) -> dict[str, list[str]]:
        """``{first: sorted children}`` (JSON-friendly, deterministic)."""
        return {k: sorted(c for c in self.second_level if c.startswith(k)) for k in sorted(self.first_level)}


def sanitize_relation(raw: object, table: CameoTable, *, strict: bool = False) -> RelationAnswer:
    """Sanitise a raw relation forecast (see module docstring).

    With ``strict=True`` (for gold answers or API validation) any invalid key or child raises
    ``ValueError`` listing them instead of being dropped.
    """
    if not isinstance(raw, Mapping):
        if strict:
            raise ValueError("relation answer must be an object mapping first-level codes to lists of codes")
        return RelationAnswer(frozenset(), frozenset())
    first: set[str] = set()
    second: set[str] = set()
    invalid: list[str] = []
    for key, value in raw.items():
        if not isinstance(key, str) or key not in table:
            invalid.append(f"unknown first-level code {key!r}")
            continue
        first.add(key)
        if not isinstance(value, list | tuple):
            if value is not None:
                invalid.append(f"value of {key!r} is not a list")
            continue
        children = table[key]
        for item in value:
            if isinstance(item, str) and item in children and item.startswith(key):
                second.add(item)
            else:
                invalid.append(f"{item!r} is not a second-level code of {key!r}")
    if strict and invalid:
        raise ValueError("invalid relation answer: " + "; ".join(invalid))
    return RelationAnswer(frozenset(first), frozenset(second))


def relation_answer_from_codes(codes: Iterable[str], table: CameoTable) -> RelationAnswer:
    """Build a gold answer from the relation codes of observed events.

    Two-digit codes add a first-level code; longer codes (second- or third-level, e.g. ``"0311"``)
    are cut to their second-level prefix, which adds both it and its parent. Unknown codes raise
    ``ValueError``.
    """
    first: set[str] = set()
    second: set[str] = set()
    for code in codes:
        parent = code[:2]
        if parent not in table or not code.isdigit() or len(code) < 2:
            raise ValueError(f"unknown CAMEO code {code!r}")
        first.add(parent)
        if len(code) >= 3:
            child = code[:3]
            if child not in table[parent]:
                raise ValueError(f"unknown CAMEO code {code!r}")
            second.add(child)
    return RelationAnswer(frozenset(first), frozenset(second))


@dataclass(frozen=True, slots=True)
class RelationPRF:
    """Precision, recall and F1, each a share on [0, 1] (MIRAI prints them x100)."""

    precision: float
    recall: float
    f1: float


def prf(predicted: AbstractSet[str], gold: AbstractSet[str]) -> RelationPRF:
    """MIRAI per-question precision/recall/F1 (shares on [0, 1]) between two code sets; empty -> 0."""
    tp = len(predicted & gold)
    p = safe_ratio(tp, len(predicted))
    r = safe_ratio(tp, len(gold))
    return RelationPRF(precision=p, recall=r, f1=safe_ratio(2 * p * r, p + r))


def class_distribution(first_level: Iterable[str], classes: Sequence[str], binary: bool) -> list[float]:
    """Frequencies of the classes of distinct first-level codes (zeros when there are none), in ``classes`` order."""
    codes = set(first_level)
    mapper = binary_class if binary else quad_class
    labels = [mapper(c) for c in codes]
    n = len(labels)
    return [labels.count(cls) / n if n > 0 else 0.0 for cls in classes]


def kl_divergence(gold: Sequence[float], predicted: Sequence[float], eps: float = KL_EPSILON) -> float:
    """MIRAI's empirical ``KL(gold || predicted)``: eps added to every probability, natural log."""
    if len(gold) != len(predicted):
        raise ValueError("distributions have different lengths")
    total = 0.0
    for g, q in zip(gold, predicted, strict=True):
        ge, qe = g + eps, q + eps
        total += ge * math.log(ge / qe)
    return total


@dataclass(frozen=True, slots=True)
class RelationScore:
    first_level: RelationPRF
    second_level: RelationPRF
    binary: RelationPRF  # P/R/F1 on deduplicated binary class sets (diagnostic, as in MIRAI's script)
    quad: RelationPRF  # P/R/F1 on deduplicated quad class sets (diagnostic)
    binary_kl: float
    quad_kl: float


def score_relation_answers(predicted: RelationAnswer, gold: RelationAnswer) -> RelationScore:
    """Score an already-sanitised prediction against a gold answer."""
    pred_bin = {binary_class(c) for c in predicted.first_level}
    gold_bin = {binary_class(c) for c in gold.first_level}
    pred_quad = {quad_class(c) for c in predicted.first_level}
    gold_quad = {quad_class(c) for c in gold.first_level}
    return RelationScore(
        first_level=prf(predicted.first_level, gold.first_level),
        second_level=prf(predicted.second_level, gold.second_level),
        binary=prf(pred_bin, gold_bin),
        quad=prf(pred_quad, gold_quad),
        binary_kl=kl_divergence(
            class_distribution(gold.first_level, BINARY_CLASSES, True),
            class_distribution(predicted.first_level, BINARY_CLASSES, True),
        ),
        quad_kl=kl_divergence(
            class_distribution(gold.first_level, QUAD_CLASSES, False),
            class_distribution(predicted.first_level, QUAD_CLASSES, False),
        ),
    )


def score_relation(prediction: object, gold: RelationAnswer, table: CameoTable) -> RelationScore:
    """Sanitise a raw forecast dict with ``table`` and score it against ``gold``."""
    return score_relation_answers(sanitize_relation(prediction, table), gold)


def _avg_prf(items: Sequence[RelationPRF]) -> RelationPRF:
    return RelationPRF(
        precision=macro_average(i.precision for i in items) or 0.0,
        recall=macro_average(i.recall for i in items) or 0.0,
        f1=macro_average(i.f1 for i in items) or 0.0,
    )


def macro_average_relation(scores: Sequence[RelationScore]) -> RelationScore | None:
    """Macro-average (unweighted mean over questions) of every field; None for no questions."""
    if not scores:
        return None
    return RelationScore(
        first_level=_avg_prf([s.first_level for s in scores]),
        second_level=_avg_prf([s.second_level for s in scores]),
        binary=_avg_prf([s.binary for s in scores]),
        quad=_avg_prf([s.quad for s in scores]),
        binary_kl=math.fsum(s.binary_kl for s in scores) / len(scores),
        quad_kl=math.fsum(s.quad_kl for s in scores) / len(scores),
    )
