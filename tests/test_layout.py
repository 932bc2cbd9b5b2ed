"""platform/ is a plain folder holding only config/; it must never shadow the stdlib module."""

from __future__ import annotations

import importlib
import platform
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.dual_db


def test_platform_folder_is_not_a_package() -> None:
    assert not (ROOT / "platform" / "__init__.py").exists()


def test_import_platform_is_the_standard_library() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert Path(platform.__file__).resolve().parent == stdlib
    assert callable(platform.python_version)


def test_platform_holds_only_config() -> None:
    entries = {p.name for p in (ROOT / "platform").iterdir() if p.name != "__pycache__"}
    assert entries == {"config"}


def test_config_package_exports_the_celery_app() -> None:
    config = importlib.import_module("config")
    assert config.celery_app.main == "hindsight"


def test_no_tests_platform_package() -> None:
    assert not (ROOT / "tests" / "platform").exists()


def test_lower_apps_never_import_higher_ones() -> None:
    order = ["common", "ingestion", "grading", "leaderboard", "endpoints", "sampleworld"]
    for lower_index, app in enumerate(order):
        higher = order[lower_index + 1 :]
        for path in (ROOT / app).rglob("*.py"):
            text = path.read_text()
            for name in higher:
                assert f"from {name}" not in text and f"import {name}" not in text, (
                    f"{path.relative_to(ROOT)} imports {name}, a higher app"
                )
