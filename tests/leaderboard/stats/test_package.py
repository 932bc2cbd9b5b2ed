"""The standings maths stays pure: no Django, cheap to import, tested without a database."""

from __future__ import annotations

from tests.purity import ROOT, assert_imports_without_django, assert_sources_do_not_mention_django

PACKAGE = ROOT / "leaderboard" / "stats"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_the_package_holds_the_standings_modules() -> None:
    assert {"views", "tables", "metrics", "columns", "bootstrap", "ranking", "baselines", "difficulty"} <= set(MODULES)
    assert {"fixed_effects", "peer", "time_average", "pairwise"} <= set(MODULES)


def test_modules_import_without_django() -> None:
    assert_imports_without_django("leaderboard.stats", MODULES)


def test_sources_do_not_mention_django() -> None:
    assert_sources_do_not_mention_django(PACKAGE, MODULES)
