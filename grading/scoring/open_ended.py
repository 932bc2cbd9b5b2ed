"""OpenForecast open-ended scoring: LRAE counting, a lexical judge and the LLM judge prompts.

LRAE (OpenForecast, Section 5 and Appendix B.3) judges each atomic predicted event:

* **Stage 1** (step 3): against the gold label list. A match names one gold label.
* **Stage 2** (step 5): a prediction not matched in stage 1 is judged against retrieved evidence;
  if supported it is a *missing true prediction* (MTP), otherwise a false positive (FP).

Counting (docs/methods.md reads the paper's "number of correct predictions" as distinct labels):

* ``TP`` = number of **distinct** gold labels matched in stage 1;
* ``FN`` = number of gold labels never matched;
* a stage-1 match to a label already matched by an earlier prediction is a **duplicate**: it is not
  false (so not FP, and not sent to stage 2) and does not add a TP; it is excluded from the
  counts and reported as ``duplicates``;
* so is a prediction that repeats an earlier one of the same forecast (``repeat``, set by
  :func:`score_open_ended` from the prediction texts with
  :func:`grading.scoring.text.near_duplicate`), whatever the judge said of it: four wordings of one
  event count once, so repetition can neither add TPs against similar gold events nor dilute FPs;
* ``MTP`` = unmatched predictions that stage 2 found supported; ``FP`` = the other unmatched ones
  (including those stage 2 did not judge, ``supported is None``).

``P_open = (TP+MTP)/(TP+MTP+FP)``, ``R_open = (TP+MTP)/(TP+MTP+FN)``, ``F1 = 2PR/(P+R)`` (formula 2),
each 0 when its denominator is 0. The **without retrieval** score ("LRAE w/o RA", Table 8) is
stage 1 only, formula 1: every unmatched prediction is an FP and there is no MTP, so
``P = TP/(TP+FP')``, ``R = TP/(TP+FN)`` with ``FP' = FP + MTP``. Scores are fractions in ``[0, 1]``.

The lexical judge implements stage 1 only (normalised token F1 of a predicted event against each gold
label, best label kept when it reaches the threshold; ties go to the lowest index); its verdicts
carry ``supported=None``, so its with- and without-retrieval scores coincide. Scores carry the judge
that produced them and :func:`macro_average_open_ended` refuses to mix judges.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from grading.scoring.aggregate import macro_average, safe_ratio
from grading.scoring.text import repeats, token_f1
from ingestion.text import tokenize

__all__ = [
    "DEFAULT_LEXICAL_THRESHOLD",
    "STAGE1_ARGUMENT_PROMPT",
    "STAGE1_LIST_PROMPT",
    "STAGE2_EVIDENCE_PROMPT",
    "Judge",
    "OpenEndedAverage",
    "OpenEndedCounts",
    "OpenEndedScore",
    "PredictionVerdict",
    "best_gold_match",
    "count_verdicts",
    "format_label_list",
    "lexical_argument_match",
    "lexical_judge",
    "macro_average_open_ended",
    "parse_stage1_response",
    "parse_yes_no",
    "render_argument_prompt",
    "render_stage1_prompt",
    "render_stage2_prompt",
    "score_open_ended",
]

Judge = Literal["llm", "lexical"]

DEFAULT_LEXICAL_THRESHOLD: Final = 0.5

# --------------------------------------------------------------------------------------------------
# Prompt templates (OpenForecast, Table 13, verbatim; the paper's "\n" are newlines here).
# Placeholders: {question}, {label}, {prediction}. Known quirks kept on purpose: "Lable", the
# trailing quote of the AQA prompt. The third template is printed with a "Stage 1" row header in
# the paper's table, but the caption says stage 2 "evaluates the prediction with retrieved web
# contents" and it judges against a single "label" (the evidence), so it is the stage-2 template.
# --------------------------------------------------------------------------------------------------

STAGE1_ARGUMENT_PROMPT: Final = (
    "Question: {question} \nLable: {label} \n Prediction: {prediction} \nPlease judge whether the prediction "
    "is correct. If the prediction matches the label clearly, then the prediction is correct, otherwise "
    'wrong. The answer (Yes or No) is: "'
)
"""Stage 1 for argument questions (AQA): one prediction against one label."""

STAGE1_LIST_PROMPT: Final = (
    "Following natural language inference, please judge whether the prediction is in accord with the given "
    "labels. Rules: \n1. Based on the given labels only. \n2.Note that the tense of the prediction should be "
    "disregarded. \n3.If certain label can clearly demonstrate the prediction, then the prediction is correct, "
    'otherwise wrong. \n4. If the prediction is wrong, output "No". If the prediction is correct, please '
    'output "Yes" along with the corresponding index in the list of labels, for example: "According to the '
    'given information, the answer is Yes, and the index is: (1)". \nThe labels are {label}\n The prediction '
    "is {prediction} The answer is:"
)
"""Stage 1 for list tasks (STF/LTF): one atomic prediction against the numbered gold list."""

STAGE2_EVIDENCE_PROMPT: Final = (
    "Following natural language inference, please judge whether the prediction is in accord with the given "
    "label. Rules: \n1. Based on the given label only. \n2.Note that the tense of the prediction should be "
    "disregarded. \n3.If certain content from label can clearly demonstrate the prediction, then the "
    'prediction is correct, otherwise wrong. \nThe label is {label}\n The prediction is "{prediction}" '
    "The answer (Yes or No) is:"
)
"""Stage 2 for list tasks: one unmatched prediction against the retrieved evidence chunks."""


def format_label_list(labels: Sequence[str]) -> str:
    """Number gold labels as ``(1) ...`` lines, the indexing the stage-1 prompt asks the judge to return."""
    return "\n".join(f"({i}) {label}" for i, label in enumerate(labels, start=1))


def render_stage1_prompt(labels: Sequence[str], prediction: str) -> str:
    return STAGE1_LIST_PROMPT.format(label=format_label_list(labels), prediction=prediction)


def render_stage2_prompt(evidence: Sequence[str], prediction: str) -> str:
    return STAGE2_EVIDENCE_PROMPT.format(label="\n".join(evidence), prediction=prediction)


def render_argument_prompt(question: str, label: str, prediction: str) -> str:
    return STAGE1_ARGUMENT_PROMPT.format(question=question, label=label, prediction=prediction)


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_INDEX = re.compile(r"index\D{0,20}?(\d+)|\((\d+)\)", re.IGNORECASE)


def _plain(text: str) -> str:
    # NFKC folds full-width letters, digits and brackets (U+FF21, U+FF10, U+FF08 ...) into ASCII ones
    # ("Yes(2)"), which judges writing in CJK contexts produce.
    return unicodedata.normalize("NFKC", text)


def parse_yes_no(text: str) -> bool | None:
    """First standalone ``yes``/``no`` in an LLM answer; None when there is neither (full-width forms read as ASCII)."""
    match = _YES_NO.search(_plain(text))
    if match is None:
        return None
    return match.group(1).lower() == "yes"


def parse_stage1_response(text: str, n_labels: int) -> int | None:
    """Gold label index (0-based) from a stage-1 list answer, or None for "No"/unparseable.

    A "Yes" without a valid 1-based index in ``1..n_labels`` (after the yes) is treated as no match.
    Full-width brackets and digits (U+FF08 and U+FF09 around U+FF12) are read like ASCII ones.
    """
    text = _plain(text)
    match = _YES_NO.search(text)
    if match is None or match.group(1).lower() != "yes":
        return None
    index = _INDEX.search(text, match.end())
    if index is None:
        return None
    number = int(index.group(1) or index.group(2))
    return number - 1 if 1 <= number <= n_labels else None


# --------------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PredictionVerdict:
    """Verdict on one atomic predicted event.

    ``gold_index``: the gold label matched in stage 1 (0-based), or None.
    ``supported``: stage-2 verdict for an unmatched prediction (True -> MTP, False/None -> FP).
    """

    gold_index: int | None
    supported: bool | None = None
    # A near-duplicate of an earlier prediction of the same forecast: counted once, as a duplicate.
    repeat: bool = False


@dataclass(frozen=True, slots=True)
class OpenEndedCounts:
    tp: int
    mtp: int
    fp: int
    fn: int
    duplicates: int


@dataclass(frozen=True, slots=True)
class OpenEndedScore:
    counts: OpenEndedCounts
    precision: float  # P_open
    recall: float  # R_open
    f1: float
    precision_without_retrieval: float
    recall_without_retrieval: float
    f1_without_retrieval: float
    judge: Judge


def count_verdicts(verdicts: Sequence[PredictionVerdict], n_gold: int) -> OpenEndedCounts:
    """TP/MTP/FP/FN/duplicates from per-prediction verdicts (see module docstring)."""
    if n_gold < 0:
        raise ValueError("n_gold must be >= 0")
    matched: set[int] = set()
    mtp = fp = duplicates = 0
    for verdict in verdicts:
        index = verdict.gold_index
        if verdict.repeat:
            duplicates += 1
        elif index is not None:
            if not 0 <= index < n_gold:
                raise ValueError(f"gold_index {index} out of range for {n_gold} gold labels")
            if index in matched:
                duplicates += 1
            else:
                matched.add(index)
        elif verdict.supported is True:
            mtp += 1
        else:
            fp += 1
    tp = len(matched)
    return OpenEndedCounts(tp=tp, mtp=mtp, fp=fp, fn=n_gold - tp, duplicates=duplicates)


def _f1(p: float, r: float) -> float:
    return safe_ratio(2 * p * r, p + r)


def score_open_ended(
    verdicts: Sequence[PredictionVerdict],
    n_gold: int,
    judge: Judge = "llm",
    *,
    predictions: Sequence[str] | None = None,
) -> OpenEndedScore:
    """LRAE P/R/F1 (formula 2) and the without-retrieval P/R/F1 (formula 1), fractions in [0, 1].

    With the ``predictions`` the verdicts are about, a prediction that repeats an earlier one
    (:func:`grading.scoring.text.near_duplicate`) counts once: it is a duplicate whatever the judge
    said, so four wordings of one event earn what one does."""
    if predictions is not None:
        if len(predictions) != len(verdicts):
            raise ValueError(f"{len(predictions)} predictions for {len(verdicts)} verdicts")
        verdicts = [
            replace(verdict, repeat=True) if repeat else verdict
            for verdict, repeat in zip(verdicts, repeats(predictions), strict=True)
        ]
    c = count_verdicts(verdicts, n_gold)
    hits = c.tp + c.mtp
    p = safe_ratio(hits, hits + c.fp)
    r = safe_ratio(hits, hits + c.fn)
    p0 = safe_ratio(c.tp, c.tp + c.fp + c.mtp)
    r0 = safe_ratio(c.tp, c.tp + c.fn)
    return OpenEndedScore(
        counts=c,
        precision=p,
        recall=r,
        f1=_f1(p, r),
        precision_without_retrieval=p0,
        recall_without_retrieval=r0,
        f1_without_retrieval=_f1(p0, r0),
        judge=judge,
    )


@dataclass(frozen=True, slots=True)
class OpenEndedAverage:
    n: int
    precision: float
    recall: float
    f1: float
    precision_without_retrieval: float
    recall_without_retrieval: float
    f1_without_retrieval: float
    judge: Judge


def macro_average_open_ended(scores: Sequence[OpenEndedScore]) -> OpenEndedAverage | None:
    """Per-question scores macro-averaged; None when empty; ValueError when judges are mixed."""
    if not scores:
        return None
    judges = {s.judge for s in scores}
    if len(judges) != 1:
        raise ValueError(f"cannot average scores from different judges: {sorted(judges)}")

    def avg(values: Sequence[float]) -> float:
        return macro_average(values) or 0.0

    return OpenEndedAverage(
        n=len(scores),
        precision=avg([s.precision for s in scores]),
        recall=avg([s.recall for s in scores]),
        f1=avg([s.f1 for s in scores]),
        precision_without_retrieval=avg([s.precision_without_retrieval for s in scores]),
        recall_without_retrieval=avg([s.recall_without_retrieval for s in scores]),
        f1_without_retrieval=avg([s.f1_without_retrieval for s in scores]),
        judge=scores[0].judge,
    )


# --------------------------------------------------------------------------------------------------
# Lexical judge (no LLM configured)
# --------------------------------------------------------------------------------------------------


def lexical_judge(
    predictions: Sequence[str], gold: Sequence[str], threshold: float = DEFAULT_LEXICAL_THRESHOLD
) -> list[PredictionVerdict]:
    """Stage-1 verdicts by normalised token F1: best gold label if its F1 >= ``threshold`` (ties: lowest index).

    Each prediction is judged independently, like the LLM's stage 1 (a second prediction matching the
    same label becomes a duplicate in :func:`count_verdicts`). ``supported`` is always None.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    gold_tokens = [tokenize(g) for g in gold]
    verdicts: list[PredictionVerdict] = []
    for prediction in predictions:
        best_index, best = best_gold_match(prediction, gold_tokens)
        verdicts.append(PredictionVerdict(gold_index=best_index if best >= threshold else None))
    return verdicts


def best_gold_match(prediction: str, gold_tokens: Sequence[Sequence[str]]) -> tuple[int | None, float]:
    """The gold label (by index into the tokenised labels) with the highest token F1 with
    ``prediction`` (ties: lowest index), and that F1; ``(None, 0.0)`` without gold labels."""
    tokens = tokenize(prediction)
    best_index: int | None = None
    best = -1.0
    for i, g in enumerate(gold_tokens):
        f1 = token_f1(tokens, g)
        if f1 > best:
            best, best_index = f1, i
    return best_index, max(best, 0.0)


def lexical_argument_match(prediction: str, label: str, threshold: float = DEFAULT_LEXICAL_THRESHOLD) -> bool:
    """Argument questions (one answer): correct when token F1 with the label reaches ``threshold``."""
    return token_f1(tokenize(prediction), tokenize(label)) >= threshold
