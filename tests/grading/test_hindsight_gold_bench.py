"""bench/hindsight_gold.py end to end on a tiny gold file: it builds the question's graph on a scratch
SQLite database (never the one the tests use), scores it and prints the figures and a table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.grading.realworld import BULGARIA, QUESTIONS

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "wcep-bench:bulgaria-prime-minister-2026"
# The Bulgarian snap election's causes, none naming Rumen Radev's win: the budget protests, the
# government's resignation, Radev quitting the presidency to run.
CAUSES = {
    "wcep-2025-12-01-028": "2025-12-02T16:45:46Z",
    "wcep-2025-12-11-010": "2025-12-11T19:10:45Z",
    "wcep-2026-01-20-018": "2026-01-22T04:56:53Z",
}


def test_the_benchmark_scores_a_built_graph_against_a_gold_file(tmp_path: Path) -> None:
    gold = tmp_path / "tiny.jsonl"
    row = {
        "question": QUESTION,
        "type": "multiple_choice",
        "outcome": "Rumen Radev",
        "window": {"start": "2025-11-15T00:00:00Z", "end": "2026-05-09T14:03:00Z"},
        "causes": [{"id": i, "published_at": t, "why": "", "direction": "towards"} for i, t in CAUSES.items()],
        "outcome_items": ["wcep-2026-05-08-022"],
        "related": ["wcep-2026-01-23-013"],
    }
    gold.write_text(json.dumps(row) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    command = [sys.executable, "bench/hindsight_gold.py", "--gold", str(gold), "--archive", str(BULGARIA)]
    result = subprocess.run(
        [*command, "--questions", str(QUESTIONS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout)
    assert out["database"].startswith("sqlite ") and "hindsight-bench-" in out["database"]
    half = out["halves"]["custom"]
    (question,) = half["questions"]
    assert question["question"] == QUESTION and question["graph"] is True
    assert question["causes"] == 3 and 0 <= question["found"] <= 3
    assert question["recall"] == round(question["found"] / 3, 3)
    assert len(question["missed"]) == 3 - question["found"] and set(question["missed"]) <= set(CAUSES)
    assert question["seconds"] > 0 and isinstance(question["passed"], bool)
    assert half["overall"]["questions"] == 1 and half["overall"]["causes"] == 3
    assert half["overall"]["recall"] == question["recall"]
    table = [line for line in result.stderr.splitlines() if line.startswith("custom ")]
    assert [line.split()[1] for line in table] == [QUESTION, "ALL"]


def test_a_gold_question_missing_from_the_questions_file_is_refused(tmp_path: Path) -> None:
    gold = tmp_path / "tiny.jsonl"
    gold.write_text(
        json.dumps(
            {
                "question": "no-such-question",
                "type": "binary",
                "causes": [],
                "window": {"start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:00Z"},
            }
        )
        + "\n"
    )
    result = subprocess.run(
        [sys.executable, "bench/hindsight_gold.py", "--gold", str(gold), "--questions", str(QUESTIONS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "no question no-such-question" in result.stderr
