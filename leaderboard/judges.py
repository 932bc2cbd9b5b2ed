"""LRAE judges for open-ended questions (OpenForecast, Section 5 and Table 13; docs/methods.md).

Two judges answer the same questions and feed the same counting code
(:func:`grading.scoring.open_ended.score_open_ended`):

- :class:`LLMJudge`: the configured OpenAI-compatible chat model, through the shared LLM client
  (``ingestion.llm``: every call bounded by the ``judge`` stage's answer tokens, one wall-clock
  budget for a question's judging in a run, prompts kept inside the context window). Stage 1 asks,
  for each atomic prediction, whether the numbered gold list supports it and which item; stage 2
  asks, for each prediction stage 1 left unmatched, whether evidence retrieved from the platform's
  corpus (published after the question's cut-off) supports it, with as much evidence as fits.
  Prompts are the paper's, verbatim, from ``grading.scoring.open_ended``.
- :class:`LexicalJudge`: no model; stage 1 by normalised token F1 against each gold item (threshold
  ``HINDSIGHT_LEXICAL_JUDGE_THRESHOLD``), no stage 2.

Every per-item verdict, with the raw model answer or the lexical score, is returned for audit.
A model failure raises :class:`JudgeUnavailable`; the grading run then judges the whole question
with the lexical judge, labelled as a fallback with the reason, so the two are never mixed within
a question (``leaderboard.services.grade_scoring``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from grading.scoring.open_ended import (
    PredictionVerdict,
    best_gold_match,
    lexical_argument_match,
    lexical_judge,
    parse_stage1_response,
    parse_yes_no,
    render_argument_prompt,
    render_stage1_prompt,
    render_stage2_prompt,
)
from grading.scoring.text import token_f1
from ingestion.llm.client import LLMClient, LLMError, Stage
from ingestion.llm.config import LLMConfig, llm_config
from ingestion.llm.tokens import estimate_tokens, truncate_to_tokens
from ingestion.text import tokenize


class JudgeUnavailable(Exception):
    """The configured LLM judge could not answer (timeout, server down, HTTP error)."""


@dataclass(frozen=True)
class EvidenceItem:
    article_id: int
    text: str


EvidenceFinder = Callable[[str], list[EvidenceItem]]


@dataclass
class Judgement:
    verdicts: list[PredictionVerdict]
    items: list[dict[str, Any]] = field(default_factory=list)


class Judge(Protocol):
    label: str
    model: str

    def judge_list(self, *, question: str, gold: Sequence[str], predictions: Sequence[str]) -> Judgement: ...

    def judge_argument(self, *, question: str, label: str, prediction: str) -> Judgement: ...


class LexicalJudge:
    label = "lexical"
    model = ""

    def __init__(self, *, threshold: float | None = None, fallback_reason: str = "") -> None:
        self.threshold = settings.HINDSIGHT_LEXICAL_JUDGE_THRESHOLD if threshold is None else threshold
        # Set when it stands in for an LLM judge that failed on this question: why.
        self.fallback_reason = fallback_reason

    def judge_list(self, *, question: str, gold: Sequence[str], predictions: Sequence[str]) -> Judgement:
        verdicts = lexical_judge(predictions, gold, self.threshold)
        gold_tokens = [tokenize(g) for g in gold]
        items = []
        for prediction, verdict in zip(predictions, verdicts, strict=True):
            _, best = best_gold_match(prediction, gold_tokens)
            items.append(
                {
                    "prediction": prediction,
                    "gold_index": verdict.gold_index,
                    "stage1": {"token_f1": round(best, 4), "threshold": self.threshold},
                    "supported": None,
                }
            )
        return Judgement(verdicts=verdicts, items=items)

    def judge_argument(self, *, question: str, label: str, prediction: str) -> Judgement:
        correct = lexical_argument_match(prediction, label, self.threshold)
        score = token_f1(tokenize(prediction), tokenize(label))
        return Judgement(
            verdicts=[PredictionVerdict(gold_index=0 if correct else None)],
            items=[
                {
                    "prediction": prediction,
                    "gold_index": 0 if correct else None,
                    "stage1": {"token_f1": round(score, 4), "threshold": self.threshold},
                    "supported": None,
                }
            ],
        )


class LLMJudge:
    """The paper's two-stage LLM judge. Answers are cached per prediction text within one instance,
    so the same event predicted by many agents on one question is asked about once."""

    label = "llm"

    def __init__(self, *, evidence: EvidenceFinder, config: LLMConfig | None = None) -> None:
        found = config or llm_config()
        if found is None:
            raise JudgeUnavailable("No LLM is configured (set HINDSIGHT_LLM_MODEL).")
        self.client = LLMClient(found)
        self.model = found.model
        self.evidence = evidence
        self.calls = 0
        self._stage: Stage | None = None
        self._stage1: dict[tuple[str, str], tuple[int | None, str]] = {}
        self._stage2: dict[str, tuple[bool | None, str, list[int]]] = {}
        self._argument: dict[tuple[str, str, str], tuple[bool, str]] = {}

    @property
    def stage(self) -> Stage:
        """The ``judge`` stage, started at the first question asked (its clock covers the whole run)."""
        if self._stage is None:
            self._stage = self.client.stage("judge")
        return self._stage

    def usage(self) -> dict[str, Any]:
        return self._stage.record.as_dict() if self._stage is not None else {}

    def ask(self, prompt: str) -> str:
        self.calls += 1
        try:
            reply = self.stage.text([{"role": "user", "content": prompt}])
        except LLMError as exc:
            raise JudgeUnavailable(f"The LLM judge failed ({exc.reason}): {exc.message}") from exc
        self.stage.note_validity(parse_yes_no(reply.text) is not None)
        return reply.text

    def _fitted_evidence(self, texts: list[str], prediction: str) -> list[str]:
        """Evidence texts cut (best first) so that the stage-2 prompt fits the context window."""
        room = self.stage.room([{"role": "user", "content": render_stage2_prompt([], prediction)}])
        kept: list[str] = []
        for text in texts:
            piece = truncate_to_tokens(text, room - 1)
            if not piece:
                break
            kept.append(piece)
            room -= estimate_tokens(piece) + 1
        return kept

    def _stage1_verdict(self, gold: Sequence[str], prediction: str) -> tuple[int | None, str]:
        key = ("\n".join(gold), prediction)
        if key not in self._stage1:
            answer = self.ask(render_stage1_prompt(gold, prediction))
            self._stage1[key] = (parse_stage1_response(answer, len(gold)), answer)
        return self._stage1[key]

    def _stage2_verdict(self, prediction: str) -> tuple[bool | None, str, list[int]]:
        if prediction not in self._stage2:
            found = self.evidence(prediction)
            texts = self._fitted_evidence([e.text for e in found], prediction) if found else []
            if not texts:
                self._stage2[prediction] = (None, "", [])
            else:
                answer = self.ask(render_stage2_prompt(texts, prediction))
                used = [e.article_id for e in found[: len(texts)]]
                self._stage2[prediction] = (parse_yes_no(answer), answer, used)
        return self._stage2[prediction]

    def judge_list(self, *, question: str, gold: Sequence[str], predictions: Sequence[str]) -> Judgement:
        verdicts: list[PredictionVerdict] = []
        items: list[dict[str, Any]] = []
        for prediction in predictions:
            index, answer = self._stage1_verdict(gold, prediction)
            item: dict[str, Any] = {"prediction": prediction, "gold_index": index, "stage1": {"answer": answer}}
            supported: bool | None = None
            if index is None:
                supported, answer2, evidence_ids = self._stage2_verdict(prediction)
                item["stage2"] = {"answer": answer2, "evidence_article_ids": evidence_ids}
            item["supported"] = supported
            verdicts.append(PredictionVerdict(gold_index=index, supported=supported))
            items.append(item)
        return Judgement(verdicts=verdicts, items=items)

    def judge_argument(self, *, question: str, label: str, prediction: str) -> Judgement:
        key = (question, label, prediction)
        if key not in self._argument:
            answer = self.ask(render_argument_prompt(question, label, prediction))
            self._argument[key] = (parse_yes_no(answer) is True, answer)
        correct, answer = self._argument[key]
        return Judgement(
            verdicts=[PredictionVerdict(gold_index=0 if correct else None)],
            items=[{"prediction": prediction, "gold_index": 0 if correct else None, "stage1": {"answer": answer}}],
        )


def judge_for_question(*, evidence: EvidenceFinder) -> Judge:
    """The LLM judge when a model is configured, else the lexical judge."""
    if settings.LLM_MODEL:
        return LLMJudge(evidence=evidence)
    return LexicalJudge()
