"""The standings maths stays pure: no Django, cheap to import, tested without a database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "leaderboard" / "stats"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_the_package_holds_the_standings_modules() -> None:
    assert {"views", "tables", "metrics", "columns", "bootstrap", "ranking", "baselines"} <= set(MODULES)
    assert {"fixed_effects", "peer", "time_average", "pairwise"} <= set(MODULES)


def test_modules_import_without_django() -> None:
    imports = "; ".join(f"import leaderboard.stats.{m}" for m in MODULES)
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
        source = (PACKAGE / f"{module}.py").read_text()
        assert "import django" not in source and "from django" not in source, module
