"""Checks that a package of pure maths stays pure: its modules import without Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def assert_imports_without_django(package: str, modules: list[str]) -> None:
    """Import every module of ``package`` in a fresh interpreter and fail if Django got imported."""
    imports = "; ".join(f"import {package}.{m}" for m in modules)
    code = (
        f"import sys; {imports}; "
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
        "print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def assert_sources_do_not_mention_django(folder: Path, modules: list[str]) -> None:
    for module in [*modules, "__init__"]:
        source = (folder / f"{module}.py").read_text()
        assert "import django" not in source and "from django" not in source, module
