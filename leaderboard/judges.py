"""LRAE judges for open-ended questions (OpenForecast, Section 5 and Table 13; docs/methods.md).

Two judges answer the same questions and feed the same counting code
(:func:`grading.scoring.open_ended.score_open_ended`):

- :class:`LLMJudge`: an OpenAI-compatible chat model (settings ``LLM_BASE_URL``, ``LLM_API_KEY``,
  ``LLM_MODEL``, ``LLM_TIMEOUT_SECONDS``). Stage 1 asks, for each atomic prediction, whether the
  numbered gold list supports it and which item; stage 2 asks, for each prediction stage 1 left
  unmatched, whether evidence retrieved from the platform's corpus (published after the question's
  cut-off) supports it. Prompts are the paper's, verbatim, from ``grading.scoring.open_ended``.
- :class:`LexicalJudge`: no model; stage 1 by normalised token F1 against each gold item (threshold
  ``HINDSIGHT_LEXICAL_JUDGE_THRESHOLD``), no stage 2.

Every per-item verdict, with the raw model answer or the lexical score, is returned for audit.
A grade records which judge produced it, and a model failure raises :class:`JudgeUnavailable`
rather than falling back to the lexical judge, so the two are never mixed within a question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
from django.conf import settings

from grading.scoring.open_ended import (
    PredictionVerdict,
    lexical_argument_match,
    lexical_judge,
    parse_stage1_response,
    parse_yes_no,
    render_argument_prompt,
    render_stage1_prompt,
    render_stage2_prompt,
)
from grading.scoring.text import token_f1, tokenize


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

    def __init__(self, *, threshold: float | None = None) -> None:
        self.threshold = settings.HINDSIGHT_LEXICAL_JUDGE_THRESHOLD if threshold is None else threshold

    def judge_list(self, *, question: str, gold: Sequence[str], predictions: Sequence[str]) -> Judgement:
        verdicts = lexical_judge(predictions, gold, self.threshold)
        gold_tokens = [tokenize(g) for g in gold]
        items = []
        for prediction, verdict in zip(predictions, verdicts, strict=True):
            tokens = tokenize(prediction)
            best = max((token_f1(tokens, g) for g in gold_tokens), default=0.0)
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

    def __init__(self, *, evidence: EvidenceFinder, client: openai.OpenAI | None = None, model: str = "") -> None:
        self.model = model or settings.LLM_MODEL
        self.client = client or openai.OpenAI(
            base_url=settings.LLM_BASE_URL or None,
            api_key=settings.LLM_API_KEY or "not-needed",
            timeout=settings.LLM_TIMEOUT_SECONDS,
            max_retries=1,
        )
        self.evidence = evidence
        self.calls = 0
        self._stage1: dict[tuple[str, str], tuple[int | None, str]] = {}
        self._stage2: dict[str, tuple[bool | None, str, list[int]]] = {}
        self._argument: dict[tuple[str, str, str], tuple[bool, str]] = {}

    def ask(self, prompt: str) -> str:
        self.calls += 1
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=0,
                max_tokens=64,
            )
        except openai.APITimeoutError as exc:
            raise JudgeUnavailable(f"The LLM judge did not answer within {settings.LLM_TIMEOUT_SECONDS:g} s.") from exc
        except openai.APIConnectionError as exc:
            raise JudgeUnavailable(
                f"The LLM judge at {settings.LLM_BASE_URL or 'the default URL'} is unreachable ({exc})."
            ) from exc
        except openai.APIStatusError as exc:
            raise JudgeUnavailable(f"The LLM judge answered HTTP {exc.status_code}: {str(exc.message)[:200]}") from exc
        except openai.OpenAIError as exc:
            raise JudgeUnavailable(f"The LLM judge failed: {exc}") from exc
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

    def _stage1_verdict(self, gold: Sequence[str], prediction: str) -> tuple[int | None, str]:
        key = ("\n".join(gold), prediction)
        if key not in self._stage1:
            answer = self.ask(render_stage1_prompt(gold, prediction))
            self._stage1[key] = (parse_stage1_response(answer, len(gold)), answer)
        return self._stage1[key]

    def _stage2_verdict(self, prediction: str) -> tuple[bool | None, str, list[int]]:
        if prediction not in self._stage2:
            found = self.evidence(prediction)
            if not found:
                self._stage2[prediction] = (None, "", [])
            else:
                answer = self.ask(render_stage2_prompt([e.text for e in found], prediction))
                self._stage2[prediction] = (parse_yes_no(answer), answer, [e.article_id for e in found])
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
