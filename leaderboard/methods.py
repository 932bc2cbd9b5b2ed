"""The methods text: one Markdown template for the /methods/ page and for docs/methods.md.

``templates/leaderboard/methods.md`` is rendered with the constants the grading and standings code
applies, the settings in effect and worked examples computed by the scoring functions themselves
(:mod:`leaderboard.methods_examples`). The page turns that Markdown into HTML with markdown-it-py;
``python manage.py methods_doc`` writes it to ``docs/methods.md``, and a test fails when the file in
the repository differs from what the code renders. So the page, the file and the code say the same.

The settings the text reads are environment variables of the same name. ``docs/methods.md``
documents the values that ship, so it is written only when none of them is overridden in the
environment (:func:`overridden_settings`); a site's own /methods/ page shows the values it runs with.
"""

from __future__ import annotations

import math
import os
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from django.template.loader import render_to_string
from django.utils.html import escape
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin

from grading.benchmarks import load_event_pairs, load_real_pairs
from grading.builders import chains as graph_chains
from grading.builders import direction as graph_direction
from grading.builders import itemgraph as graph_items
from grading.builders import offline as graph_offline
from grading.builders import spread as graph_spread
from grading.builders import story as graph_story
from grading.builders import window as graph_window
from grading.builders.offline import HISTORY_DAYS, HISTORY_MAX_ARTICLES
from grading.scoring import GRADER_VERSION
from grading.scoring import outcome as outcome_rules
from grading.scoring.definitions import GRADE_SCORES, range_text
from grading.scoring.event_features import FEATURE_NAMES
from grading.scoring.guarded import (
    COSINE_FLOOR,
    EMBEDDED_CHARS,
    GUARDED_MATCHER_VERSION,
    KEPT_GUARDS,
    LEXICAL_FLOOR,
)
from grading.scoring.guarded import SEMANTIC_THRESHOLD as GUARDED_SEMANTIC_THRESHOLD
from grading.scoring.learned_decision import learned_decision
from grading.scoring.matchers import MATCHER_CATALOGUE
from grading.scoring.matching import DEFAULT_RATIONALE, MatcherSettings
from grading.scoring.multilingual import EMBEDDING_MODEL
from grading.scoring.open_ended import DEFAULT_LEXICAL_THRESHOLD
from grading.scoring.relation import KL_EPSILON
from grading.scoring.semantic import MODEL_NAME, SEMANTIC_MATCHER_VERSION, SEMANTIC_THRESHOLD
from grading.scoring.text import DUPLICATE_JACCARD
from ingestion.text import STOPWORDS
from leaderboard import methods_examples
from leaderboard.selectors.grade_keys import matcher_settings
from leaderboard.selectors.standings import METRIC_LABELS
from leaderboard.services.predictions import PROBABILITY_SUM_TOLERANCE
from leaderboard.stats import bootstrap, ranking
from leaderboard.stats.baselines import BASELINE_LABELS, BASELINES
from leaderboard.stats.metrics import LOWER_IS_BETTER, METRIC_RANGES, METRICS, RANK_METRICS, STANDINGS_VERSION
from leaderboard.stats.pairwise import PAIRWISE_RESAMPLES
from leaderboard.stats.views import HORIZON_BUCKETS, HORIZON_LABELS

TEMPLATE: Final = "leaderboard/methods.md"
DOC_PATH: Final = Path(settings.BASE_DIR) / "docs" / "methods.md"
REGENERATE: Final = "python manage.py methods_doc"

# The settings the text reads; each is also the name of the environment variable that sets it.
METHODS_SETTINGS: Final = (
    "HINDSIGHT_MATCHER",
    "HINDSIGHT_MATCHER_THRESHOLD",
    "HINDSIGHT_MATCHER_DATE_WINDOW_DAYS",
    "HINDSIGHT_MATCHER_BM25_WEIGHT",
    "HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT",
    "HINDSIGHT_KEY_EVENTS_TOP_K",
    "HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD",
    "HINDSIGHT_LEXICAL_JUDGE_THRESHOLD",
    "HINDSIGHT_JUDGE_EVIDENCE_ARTICLES",
    "HINDSIGHT_EVIDENCE_WINDOW_DAYS",
    "HINDSIGHT_GRAPH_MIN_DEPTH",
    "HINDSIGHT_GRAPH_MIN_EVENTS",
    "HINDSIGHT_GRAPH_MIN_SOURCES",
    "HINDSIGHT_GRAPH_MIN_LINKS",
    "HINDSIGHT_GRAPH_MIN_LINK_CONFIDENCE",
    "HINDSIGHT_GRAPH_MIN_LINK_STRENGTH",
    "HINDSIGHT_GRAPH_BUDGET",
    "HINDSIGHT_MIN_RANKED_N",
)


def overridden_settings() -> list[str]:
    """The settings of the text that the environment overrides (docs/methods.md wants none)."""
    return [name for name in METHODS_SETTINGS if name in os.environ]


def _mark(element_id: str, text: object, *, html: bool, tag: str = "span") -> str:
    """``text`` with an element id on the page (tests and links find it); plain in the Markdown file."""
    if not html:
        return str(text)
    return f'<{tag} id="{element_id}">{escape(str(text))}</{tag}>'


def _wrap(element_id: str, *, html: bool) -> tuple[str, str]:
    """An HTML block around a Markdown table on the page (blank lines keep the table Markdown)."""
    if not html:
        return "", ""
    return f'<div id="{element_id}">\n', "\n</div>"


_CV_LABELS: Final = {
    "negated": "negated", "antonym": "antonym verb", "other_action": "another verb (another action)",
    "swapped_roles": "swapped roles", "different_quantity": "different quantity", "other_institution": "another institution",
    "stuffed": "stuffed", "same_story": "same story, another event", "unrelated": "unrelated",
    "rewrite_past": "rewrite: past tense", "rewrite_synonym": "rewrite: synonym verb", "rewrite_shorter": "rewrite: shorter",
    "rewrite_description": "rewrite: description added", "rewrite_combined": "rewrite: several at once",
    "archive_rewrite": "editors' rewrites", "paraphrase_shared": "paraphrase, shared words",
    "paraphrase_none": "paraphrase, no shared word", "other_outlet": "another outlet's wording",
    "reversed": "reversed", "other_date": "same story, over a week away",
}  # fmt: skip


def _cv_table(cv: dict[str, Any]) -> str:
    """The grouped cross-validation of the shipped model, per category, as a Markdown table."""
    num = methods_examples.num
    lines = ["| Category (pairs) | generated | real, development |", "|---|---|---|"]
    for part, label in (("generated", "generated"), ("real_dev", "real, development")):
        row = cv[part]
        lines.append(
            f"| **overall, {label}** ({row['pairs']}): precision / recall / F1 | "
            + ("" if part == "generated" else "- | ")
            + f"{num(row['precision'], 2)} / {num(row['recall'], 2)} / {num(row['f1'], 2)} |"
            + (" - |" if part == "generated" else "")
        )
    for part in ("generated", "real_dev"):
        for category, row in cv[part].items():
            if isinstance(row, dict):
                figure = (
                    f"recall {num(row['recall'], 2)}"
                    if "recall" in row
                    else f"false matches {num(row['false_match_rate'], 2)}"
                )
                cells = [figure, "-"] if part == "generated" else ["-", figure]
                lines.append(f"| {_CV_LABELS.get(category, category)} ({row['pairs']}) | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def _guarded_context() -> dict[str, Any]:
    num = methods_examples.num
    decision = learned_decision()
    training = decision.training
    cv = training["cross_validation"]
    guards = cv["guards_on_dev"]
    return {
        "guarded_lexical_floor": num(LEXICAL_FLOOR, 2),
        "guarded_cosine_floor": num(COSINE_FLOOR, 2),
        "guarded_trees": decision.trees,
        "guarded_depth": decision.depth,
        "guarded_threshold": num(decision.threshold, 2),
        "guarded_features": len(FEATURE_NAMES),
        "guarded_dev_alone": num(guards["learned_alone_f1"], 2),
        "guarded_dev_kept": num(guards["learned_with_kept_f1"], 2),
        "guarded_kept": ", ".join(f"`{g}`" for g in sorted(KEPT_GUARDS)),
        "guarded_semantic_threshold": num(GUARDED_SEMANTIC_THRESHOLD, 2),
        "guarded_sources": f"{training['sources']:,}",
        "guarded_rewrites": cv["generated"]["archive_rewrite"]["pairs"],
        "guarded_real_weight": num(training["real_weight"], 0),
        "guarded_pairs": f"{training['pairs']:,}",
        "guarded_cv_table": _cv_table(cv),
        "guarded_cv_generated": num(cv["generated"]["f1"], 2),
        "real_test_pairs": len(load_real_pairs("test")),
    }


def methods_context(*, html: bool) -> dict[str, Any]:
    """Everything the template prints, as text."""
    num = methods_examples.num
    configured = matcher_settings()
    defaults = MatcherSettings()
    matcher_open, matcher_close = _wrap("matcher-settings", html=html)
    settings_open, settings_close = _wrap("settings-in-use", html=html)
    matchers_open, matchers_close = _wrap("matchers", html=html)
    return {
        "grader_version": _mark("grader-version", GRADER_VERSION, html=html, tag="code"),
        "matcher_version": _mark("matcher-version", configured.version, html=html, tag="code"),
        "matcher_name": _mark("matcher-name", configured.matcher, html=html, tag="code"),
        "log_clip": _mark("log-clip", repr(outcome_rules.LOG_CLIP), html=html),
        "log_clip_hi": repr(1 - outcome_rules.LOG_CLIP),
        "worst_log": num(math.log(outcome_rules.LOG_CLIP), 2),
        "sum_tolerance": repr(outcome_rules.PROBABILITY_SUM_TOLERANCE),
        "submit_sum_tolerance": repr(PROBABILITY_SUM_TOLERANCE),
        "point_tolerance_pct": num(outcome_rules.POINT_RELATIVE_TOLERANCE * 100, 0),
        "kl_epsilon": repr(KL_EPSILON),
        "lexical_threshold": num(settings.HINDSIGHT_LEXICAL_JUDGE_THRESHOLD),
        "lexical_default": num(DEFAULT_LEXICAL_THRESHOLD),
        "judge_articles": settings.HINDSIGHT_JUDGE_EVIDENCE_ARTICLES,
        "evidence_window_days": settings.HINDSIGHT_EVIDENCE_WINDOW_DAYS,
        "stopword_count": len(STOPWORDS),
        "matcher": configured,
        "text_fields": " and ".join(configured.text_fields.split("+")),
        "matcher_rows": [
            (f.name, getattr(configured, f.name), getattr(defaults, f.name)) for f in fields(MatcherSettings)
        ],
        "matchers": MATCHER_CATALOGUE,
        "matchers_open": matchers_open,
        "matchers_close": matchers_close,
        "default_rationale": DEFAULT_RATIONALE,
        "matcher_open": matcher_open,
        "matcher_close": matcher_close,
        "semantic_threshold": num(settings.HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD, 2),
        "semantic_default": num(SEMANTIC_THRESHOLD, 2),
        "semantic_model": MODEL_NAME,
        "semantic_version": SEMANTIC_MATCHER_VERSION,
        "guarded_version": GUARDED_MATCHER_VERSION,
        **_guarded_context(),
        "guarded_model": EMBEDDING_MODEL,
        "guarded_embedded_chars": EMBEDDED_CHARS,
        "duplicate_jaccard": num(DUPLICATE_JACCARD, 1),
        "benchmark_pairs": len(load_event_pairs()),
        "graph": {
            "depth": settings.HINDSIGHT_GRAPH_MIN_DEPTH,
            "events": settings.HINDSIGHT_GRAPH_MIN_EVENTS,
            "sources": settings.HINDSIGHT_GRAPH_MIN_SOURCES,
            "links": settings.HINDSIGHT_GRAPH_MIN_LINKS,
            "confidence": num(settings.HINDSIGHT_GRAPH_MIN_LINK_CONFIDENCE, 2),
            "strength": num(settings.HINDSIGHT_GRAPH_MIN_LINK_STRENGTH, 2),
            "budget": settings.HINDSIGHT_GRAPH_BUDGET,
            "anchor_ratio": graph_story.ANCHOR_RATIO,
            "history_days": HISTORY_DAYS,
            "history_max": f"{HISTORY_MAX_ARTICLES:,}",
            "story_days": graph_offline.STORY_DAYS,
            "window_max": f"{graph_window.WINDOW_MAX_ARTICLES:,}",
            "window_candidates": f"{graph_window.WINDOW_CANDIDATES:,}",
            "term_weight": num(graph_items.TERM_WEIGHT, 2),
            "hub_share": num(graph_items.HUB_SHARE * 100, 0),
            "hub_min": graph_items.HUB_MIN,
            "time_scale": num(graph_items.TIME_SCALE_DAYS, 0),
            "restart": num(graph_spread.RESTART, 2),
            "spread_rounds": graph_story.SPREAD_ROUNDS,
            "story_share": num(graph_story.STORY_SHARE, 2),
            "bridge_min": num(graph_story.BRIDGE_MIN, 2),
            "spread_bridge": num(graph_story.SPREAD_BRIDGE, 2),
            "bridge_strong": num(graph_story.BRIDGE_STRONG, 2),
            "wording_floor": num(graph_story.WORDING_FLOOR, 2),
            "cue_bonus": num(graph_chains.CUE_BONUS, 2),
            "hop_events": num(graph_chains.HOP_EVENTS, 0),
            "event_relevance": num(graph_offline.EVENT_RELEVANCE, 2),
            "link_full": num(graph_offline.LINK_FULL, 2),
            "against_margin": graph_direction.AGAINST_MARGIN,
        },
        "resamples": f"{bootstrap.BOOTSTRAP_RESAMPLES:,}",
        "seed": bootstrap.BOOTSTRAP_SEED,
        "confidence_pct": num(bootstrap.CONFIDENCE * 100, 0),
        "lower_pct": num(50 * (1 - bootstrap.CONFIDENCE), 1),
        "upper_pct": num(100 - 50 * (1 - bootstrap.CONFIDENCE), 1),
        "tie_tolerance": repr(ranking.TIE_TOLERANCE),
        "exact_below": bootstrap.EXACT_BELOW,
        "min_n": _mark("min-n", settings.HINDSIGHT_MIN_RANKED_N, html=html, tag="strong"),
        "rank_metrics": [METRIC_LABELS[m] for m in RANK_METRICS],
        "rank_metrics_fallback": [METRIC_LABELS[m] for m in RANK_METRICS if m != ranking.ADJUSTED],
        "min_sharing_agents": ranking.MIN_SHARING_AGENTS,
        "min_n_value": settings.HINDSIGHT_MIN_RANKED_N,
        "pairwise_resamples": f"{PAIRWISE_RESAMPLES:,}",
        "standings_version": _mark("standings-version", STANDINGS_VERSION, html=html, tag="code"),
        "metrics": [(m, METRIC_LABELS[m], "lower" if m in LOWER_IS_BETTER else "higher") for m in METRICS],
        "call_tolerance": repr(outcome_rules.TIE_TOLERANCE),
        "score_ranges": [(d.name, d.label, d.range, d.better) for d in GRADE_SCORES.values()],
        "metric_ranges": [
            (m, METRIC_LABELS[m], range_text(*METRIC_RANGES[m]), "lower" if m in LOWER_IS_BETTER else "higher")
            for m in METRICS
        ],
        "horizons": [(b, HORIZON_LABELS[b]) for b, _ in HORIZON_BUCKETS],
        "baselines": {b: BASELINE_LABELS[b] for b in BASELINES},
        "settings_rows": [(name, getattr(settings, name)) for name in METHODS_SETTINGS],
        "settings_open": settings_open,
        "settings_close": settings_close,
        "ex": methods_examples.all_examples(),
    }


def methods_markdown(*, html: bool = False) -> str:
    """The methods as Markdown (``html=True`` adds the page's element ids)."""
    text = render_to_string(TEMPLATE, methods_context(html=html))
    # Template tags leave runs of blank lines; Markdown needs one.
    lines: list[str] = []
    for line in text.strip().splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table").use(anchors_plugin, min_level=2, max_level=3)


def methods_html() -> str:
    """The methods as HTML for the page (headings carry GitHub-style ids, so links match the file's).

    The text depends only on the code and on METHODS_SETTINGS, so it is rendered once per set of values.
    """
    return _html_for(tuple(repr(getattr(settings, name)) for name in METHODS_SETTINGS))


@lru_cache(maxsize=4)
def _html_for(values: tuple[str, ...]) -> str:
    return _renderer().render(methods_markdown(html=True))
