"""The scoring package stays pure: no Django, cheap to import, versioned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grading.scoring

ROOT = Path(__file__).resolve().parents[3]
MODULES = [
    "aggregate",
    "evidence",
    "matchers",
    "open_ended",
    "outcome",
    "reasoning",
    "relation",
    "text",
    "worldreasoner",
]


def test_grader_version() -> None:
    assert grading.scoring.GRADER_VERSION == "1.0"
    assert isinstance(grading.scoring.GRADER_VERSION, str)


def test_modules_import_without_django() -> None:
    imports = "; ".join(f"import grading.scoring.{m}" for m in MODULES)
    code = (
        f"import sys; {imports}; "
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
        "print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_sources_do_not_mention_django() -> None:
    for module in [*MODULES, "__init__"]:
        source = (ROOT / "grading" / "scoring" / f"{module}.py").read_text()
        assert "import django" not in source and "from django" not in source
