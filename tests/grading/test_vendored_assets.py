"""The vendored graph library is the recorded release, with its licence, found by staticfiles."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.contrib.staticfiles import finders

VERSION = "3.34.4"
SHA256 = "081591ab735b2b6a3b31a3c60f8f3a3e2fee8c92939e0c7820ad1208571b6cd8"
VENDOR = Path(__file__).resolve().parents[2] / "static" / "vendor"


def test_cytoscape_is_the_recorded_release() -> None:
    built = VENDOR / "cytoscape" / "cytoscape.min.js"
    assert hashlib.sha256(built.read_bytes()).hexdigest() == SHA256
    assert f'"{VERSION}"' in built.read_text(encoding="utf-8")
    assert "Permission is hereby granted, free of charge" in (VENDOR / "cytoscape" / "LICENSE").read_text()
    readme = (VENDOR / "README.md").read_text()
    assert VERSION in readme and SHA256 in readme and "MIT" in readme


def test_page_scripts_are_served_as_static_files() -> None:
    for name in ("vendor/cytoscape/cytoscape.min.js", "hindsight/graph.js", "hindsight/review.js"):
        assert finders.find(name), name
