"""Forecasting questions generated from recent news by an LLM, landing as drafts for curation.

Pipeline (one run of the hourly task):
1. cluster recent dated articles by TF-IDF cosine similarity of title + summary (single linkage
   over pairs above a threshold; deterministic, independent of the order rows come back in);
2. claim each new cluster (conditional UPDATE, so a duplicate task does nothing);
3. ask the model for questions about the cluster (JSON), validate every field;
4. ask the model to score each valid question for clarity, measurability, answerability and
   temporal validity (0-1 with reasons), validate;
5. store survivors as Question(status=draft, origin=news) with the scores and provenance.

Calls go through the shared LLM client (``ingestion.llm``): every call is bounded by its stage's
answer tokens and wall-clock budget (``question_generation``, ``question_scoring``), the prompt is
cut to fit the context window (summaries shortened, then the oldest articles dropped), and JSON is
asked for by the server's structured-output method. An answer that is not the required JSON gets one
correction round. Anything still malformed is logged, recorded on the cluster and skipped: one bad
answer never stops the others. A server error or timeout releases the cluster so a later run
retries it. Each cluster keeps the per-stage record (tokens, seconds, valid on first try).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ingestion.llm.client import LLMClient, LLMError
from ingestion.llm.config import llm_config
from ingestion.llm.jsontext import parse_json_object
from ingestion.models import Article, NewsCluster, Question
from ingestion.services.question_prompts import (
    CRITERIA,
    GENERATED_TYPES,
    ask_for_questions,
    ask_for_scores,
)
from ingestion.services.questions import question_upsert
from ingestion.text import tokenize

logger = logging.getLogger(__name__)

PROMPT_VERSION = "qgen-1"
MAX_TITLE = 300
MAX_HORIZON_DAYS = 5 * 366


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def generation_status() -> dict[str, Any]:
    """For the staff sources page: whether generation runs, and with which model."""
    config = llm_config()
    if config is None:
        return {"enabled": False, "model": "", "text": "Question generation: off (no LLM configured)"}
    return {"enabled": True, "model": config.model, "text": f"Question generation: on (model {config.model})"}


# ---------------------------------------------------------------- clustering (pure)


def cluster_terms(text: str) -> list[str]:
    """The project's tokens of ``text`` without bare numbers (dates and counts do not make a topic)."""
    return [t for t in tokenize(text) if not t.isdigit()]


@dataclass(frozen=True)
class Cluster:
    article_ids: tuple[int, ...]
    terms: tuple[str, ...]

    @property
    def key(self) -> str:
        return hashlib.sha256(",".join(str(i) for i in self.article_ids).encode()).hexdigest()


def cluster_texts(docs: dict[int, str], *, threshold: float, min_size: int = 2, max_size: int = 12) -> list[Cluster]:
    """Single-linkage clusters of documents whose TF-IDF cosine similarity reaches ``threshold``.

    Sorted by size (largest first) then smallest id; clusters larger than ``max_size`` keep their
    ``max_size`` highest ids (the newest rows), so a prompt stays small.
    """
    ids = sorted(docs)
    tokens = {i: cluster_terms(docs[i]) for i in ids}
    df: Counter[str] = Counter()
    for i in ids:
        df.update(set(tokens[i]))
    n = len(ids)
    vectors: dict[int, dict[str, float]] = {}
    for i in ids:
        tf = Counter(tokens[i])
        vec = {t: c * (math.log((1 + n) / (1 + df[t])) + 1) for t, c in tf.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors[i] = {t: v / norm for t, v in vec.items()}
    parent = {i: i for i in ids}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    postings: dict[str, list[int]] = defaultdict(list)
    for i in ids:
        for t in vectors[i]:
            postings[t].append(i)
    for i in ids:
        candidates = {j for t in vectors[i] for j in postings[t] if j > i}
        for j in sorted(candidates):
            vi, vj = vectors[i], vectors[j]
            sim = sum(w * vj.get(t, 0.0) for t, w in vi.items())
            if sim >= threshold:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in ids:
        groups[find(i)].append(i)
    clusters: list[Cluster] = []
    for members in groups.values():
        if len(members) < min_size:
            continue
        kept = tuple(sorted(members)[-max_size:])
        shared: Counter[str] = Counter()
        for i in kept:
            shared.update(set(tokens[i]))
        terms = tuple(t for t, c in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0])) if c > 1)[:8]
        clusters.append(Cluster(article_ids=kept, terms=terms))
    clusters.sort(key=lambda c: (-len(c.article_ids), c.article_ids[0]))
    return clusters


# ---------------------------------------------------------------- validation of model output (pure)


class ModelOutputError(ValueError):
    """The model's answer does not have the required shape; the message says what is wrong."""


def parse_json_answer(text: str | None) -> Any:
    """The JSON object of a chat answer (code fences and surrounding prose tolerated), or ModelOutputError."""
    value, problem = parse_json_object(text)
    if value is None:
        raise ModelOutputError(problem)
    return value


def _text(item: dict[str, Any], key: str, *, required: bool = True, limit: int = 5000) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ModelOutputError(f"'{key}' must be a non-empty string")
    if len(value) > limit:
        raise ModelOutputError(f"'{key}' is longer than {limit} characters")
    return value.strip()


def _resolve_by(value: Any, *, now: datetime) -> datetime:
    parsed: datetime | None = None
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            day: date | None = parse_date(value.strip())
        except ValueError:
            day = None
        # A bare date means "by the end of that day".
        parsed = datetime.combine(day, time.min, tzinfo=UTC) + timedelta(days=1) if day else None
    elif isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
    if parsed is None:
        raise ModelOutputError(f"'resolve_by' {value!r} is not an ISO 8601 date")
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    parsed = parsed.astimezone(UTC)
    if parsed <= now + timedelta(days=1):
        raise ModelOutputError(f"'resolve_by' {value!r} is not at least a day in the future")
    if parsed > now + timedelta(days=MAX_HORIZON_DAYS):
        raise ModelOutputError(f"'resolve_by' {value!r} is more than five years away")
    return parsed


def validate_generated_question(item: Any, *, cluster_ids: set[int], now: datetime) -> dict[str, Any]:
    """One proposed question in clean form, or ModelOutputError naming the problem."""
    if not isinstance(item, dict):
        raise ModelOutputError("a question must be a JSON object")
    title = _text(item, "title", limit=MAX_TITLE)
    qtype = item.get("type")
    if qtype not in GENERATED_TYPES:
        raise ModelOutputError(f"'type' {qtype!r} is not one of {', '.join(GENERATED_TYPES)}")
    clean: dict[str, Any] = {
        "title": title,
        "type": qtype,
        "answer_format": _text(item, "answer_format", limit=1000),
        "domain": _text(item, "domain", limit=100).lower(),
        "resolution_criteria": _text(item, "resolution_criteria"),
        "background": _text(item, "background", required=False),
        "resolve_by": _resolve_by(item.get("resolve_by"), now=now),
    }
    options = item.get("options") or []
    if qtype == Question.Type.MULTIPLE_CHOICE:
        if (
            not isinstance(options, list)
            or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            raise ModelOutputError("'options' must list at least two non-empty strings for multiple_choice")
        stripped = [o.strip() for o in options]
        if len(set(stripped)) != len(stripped):
            raise ModelOutputError("'options' must be distinct")
        clean["options"] = stripped
    elif options:
        raise ModelOutputError(f"'options' only apply to multiple_choice, not {qtype}")
    if qtype == Question.Type.QUANTITY:
        clean["unit"] = _text(item, "unit", required=False, limit=50)
    if qtype == Question.Type.TIMEFRAME:
        granularity = item.get("granularity")
        if granularity not in Question.Granularity.values:
            raise ModelOutputError(f"'granularity' must be one of {', '.join(Question.Granularity.values)}")
        clean["granularity"] = granularity
    provenance = item.get("provenance")
    if (
        not isinstance(provenance, list)
        or not provenance
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in provenance)
    ):
        raise ModelOutputError("'provenance' must be a non-empty list of article ids")
    outside = sorted(set(provenance) - cluster_ids)
    if outside:
        raise ModelOutputError(f"'provenance' names articles outside the cluster: {outside}")
    clean["provenance"] = sorted(set(provenance))
    return clean


def validate_scores(answer: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Scores in [0, 1] and a reason for each criterion, or ModelOutputError."""
    if not isinstance(answer, dict):
        raise ModelOutputError("the scores must be a JSON object")
    scores: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for criterion in CRITERIA:
        entry = answer.get(criterion)
        if not isinstance(entry, dict):
            raise ModelOutputError(f"'{criterion}' must be an object with score and reason")
        score = entry.get("score")
        if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
            raise ModelOutputError(f"'{criterion}.score' must be a number")
        if not 0 <= score <= 1:
            raise ModelOutputError(f"'{criterion}.score' {score} is outside [0, 1]")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ModelOutputError(f"'{criterion}.reason' must be a non-empty string")
        scores[criterion] = float(score)
        reasons[criterion] = reason.strip()[:2000]
    return scores, reasons


# ---------------------------------------------------------------- the run


@dataclass
class GenerationReport:
    skipped_reason: str = ""
    clusters_found: int = 0
    clusters_processed: int = 0
    clusters_already_done: int = 0
    clusters_failed: int = 0
    questions_created: int = 0
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "skipped_reason": self.skipped_reason,
            "clusters_found": self.clusters_found,
            "clusters_processed": self.clusters_processed,
            "clusters_already_done": self.clusters_already_done,
            "clusters_failed": self.clusters_failed,
            "questions_created": self.questions_created,
            "problems": self.problems,
        }


def recent_clusters(*, now: datetime) -> list[Cluster]:
    """Clusters of articles published in the generation window before ``now``."""
    window = timedelta(hours=_setting("QUESTION_GENERATION_WINDOW_HOURS", 48))
    limit = _setting("QUESTION_GENERATION_MAX_ARTICLES", 500)
    rows = (
        Article.objects.filter(published_at__isnull=False, published_at__gte=now - window, published_at__lte=now)
        .order_by("-published_at", "-id")
        .values_list("id", "title", "summary")[:limit]
    )
    docs = {pk: f"{title}\n{summary}" for pk, title, summary in rows}
    return cluster_texts(
        docs,
        threshold=_setting("QUESTION_GENERATION_SIMILARITY", 0.3),
        min_size=_setting("QUESTION_GENERATION_MIN_CLUSTER_SIZE", 2),
        max_size=_setting("QUESTION_GENERATION_MAX_CLUSTER_SIZE", 12),
    )


def _claim(cluster: Cluster, *, now: datetime) -> NewsCluster | None:
    row, _ = NewsCluster.objects.get_or_create(
        key=cluster.key, defaults={"article_ids": list(cluster.article_ids), "terms": list(cluster.terms)}
    )
    if row.finished_at is not None:
        return None
    stale = now - timedelta(seconds=_setting("QUESTION_GENERATION_CLAIM_STALE_SECONDS", 1800))
    # A claim older than the stale limit belongs to a worker that died mid-cluster.
    claimed = (
        NewsCluster.objects.filter(pk=row.pk, finished_at=None)
        .filter(Q(claimed_at=None) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    if claimed != 1:
        return None
    row.refresh_from_db()
    return row


def questions_generate_from_news(*, now: datetime | None = None) -> GenerationReport:
    """One generation run over recent news. Does nothing (and says why) without an LLM."""
    now = now or timezone.now()
    config = llm_config()
    if config is None:
        return GenerationReport(skipped_reason="no LLM configured (set HINDSIGHT_LLM_MODEL)")
    report = GenerationReport()
    clusters = recent_clusters(now=now)[: _setting("QUESTION_GENERATION_MAX_CLUSTERS", 5)]
    report.clusters_found = len(clusters)
    for cluster in clusters:
        row = _claim(cluster, now=now)
        if row is None:
            report.clusters_already_done += 1
            continue
        client = LLMClient(config)
        try:
            created, problems = _process_cluster(client, row, cluster, now=now)
        except LLMError as exc:
            message = f"cluster {cluster.key[:12]}: generation call failed ({exc.reason}): {exc.message}"
            logger.warning(message)
            report.problems.append(message)
            report.clusters_failed += 1
            # Release the claim: a server fault is not the cluster's fault, a later run retries.
            NewsCluster.objects.filter(pk=row.pk).update(
                claimed_at=None,
                problems=[*row.problems, {"at": now.isoformat(), "problem": message}],
                llm_usage=client.stages(),
            )
            continue
        report.clusters_processed += 1
        report.questions_created += created
        report.problems.extend(problems)
        NewsCluster.objects.filter(pk=row.pk).update(
            finished_at=now,
            model_name=config.model,
            questions_created=created,
            problems=[*row.problems, *({"at": now.isoformat(), "problem": p} for p in problems)],
            llm_usage=client.stages(),
        )
    return report


def _process_cluster(client: LLMClient, row: NewsCluster, cluster: Cluster, *, now: datetime) -> tuple[int, list[str]]:
    """Drafts from one cluster; a server fault (LLMError) propagates so the cluster is retried."""
    articles = list(Article.objects.filter(pk__in=cluster.article_ids).order_by("published_at", "id"))
    cluster_ids = {a.pk for a in articles}
    label = f"cluster {cluster.key[:12]}"
    problems: list[str] = []
    limit = _setting("QUESTION_GENERATION_MAX_QUESTIONS_PER_CLUSTER", 3)
    try:
        reply = ask_for_questions(client, articles, now=now, limit=limit)
    except LLMError as exc:
        if exc.reason != "context_exceeded":
            raise
        problems.append(f"{label}: not asked: {exc.message}")
        logger.warning(problems[-1])
        return 0, problems
    proposals = reply.payload.get("questions") if reply.payload is not None else None
    if not isinstance(proposals, list):
        problem = reply.problem or "no 'questions' list"
        problems.append(f"{label}: malformed generation answer: {problem}")
        logger.warning(problems[-1])
        return 0, problems
    created = 0
    scoring = client.stage("question_scoring")
    for index, proposal in enumerate(proposals[:limit]):
        where = f"{label} question {index}"
        try:
            clean = validate_generated_question(proposal, cluster_ids=cluster_ids, now=now)
        except ModelOutputError as exc:
            problems.append(f"{where}: rejected: {exc}")
            logger.warning(problems[-1])
            continue
        try:
            scored = ask_for_scores(scoring, clean, now=now)
            if scored.payload is None:
                raise ModelOutputError(scored.problem)
            scores, reasons = validate_scores(scored.payload)
        except (ModelOutputError, LLMError) as exc:
            problems.append(f"{where}: scoring failed: {exc}")
            logger.warning(problems[-1])
            continue
        try:
            _store_draft(clean, scores, reasons, row=row, cluster=cluster, index=index, model=client.model, now=now)
        except ValidationError as exc:
            problems.append(f"{where}: not storable: {' '.join(exc.messages)}")
            logger.warning(problems[-1])
            continue
        created += 1
    return created, problems


@transaction.atomic
def _store_draft(
    clean: dict[str, Any],
    scores: dict[str, float],
    reasons: dict[str, str],
    *,
    row: NewsCluster,
    cluster: Cluster,
    index: int,
    model: str,
    now: datetime,
) -> Question:
    data: dict[str, Any] = {
        "external_id": f"news:{cluster.key[:16]}:{index}",
        "title": clean["title"],
        "type": clean["type"],
        "track": Question.Track.LIVE,
        "status": Question.Status.DRAFT,
        "origin": Question.Origin.NEWS,
        "open_at": now,
        "close_at": clean["resolve_by"],
        "resolve_by": clean["resolve_by"],
        "resolution_criteria": f"{clean['resolution_criteria']}\n\nAnswer format: {clean['answer_format']}",
        "background": clean["background"],
        "domain": clean["domain"],
    }
    for key in ("options", "unit", "granularity"):
        if key in clean:
            data[key] = clean[key]
    question, _ = question_upsert(data=data, origin=Question.Origin.NEWS, now=now)
    question.generation = {
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "generated_at": now.isoformat(),
        "answer_format": clean["answer_format"],
        "scores": scores,
        "reasons": reasons,
        "cluster": {
            "id": row.pk,
            "key": cluster.key,
            "article_ids": list(cluster.article_ids),
            "terms": list(cluster.terms),
        },
    }
    question.save(update_fields=["generation", "updated_at"])
    question.provenance_articles.set(clean["provenance"])
    return question
