"""The standings import one way: services -> selectors -> the pure maths in leaderboard.stats."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


STANDINGS_SELECTORS = ("standings.py", "grade_tables.py", "standings_cache.py")


def test_standings_selectors_never_import_services() -> None:
    for name in STANDINGS_SELECTORS:
        path = ROOT / "leaderboard" / "selectors" / name
        bad = sorted(m for m in _imports(path) if m.startswith("leaderboard.services"))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_maths_imports_neither_selectors_nor_services() -> None:
    for path in (ROOT / "leaderboard" / "stats").glob("*.py"):
        bad = sorted(
            m
            for m in _imports(path)
            if m.startswith(("leaderboard.services", "leaderboard.selectors", "leaderboard.models"))
        )
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_old_standings_module_is_gone() -> None:
    assert not (ROOT / "leaderboard" / "standings.py").exists()
