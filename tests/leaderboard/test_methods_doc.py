"""docs/methods.md and the /methods/ page come from one template and say the same; the file is current."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from leaderboard.methods import DOC_PATH, METHODS_SETTINGS, methods_markdown, overridden_settings

REGENERATE = "python manage.py methods_doc"


def _code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```text\n(.*?)```", markdown, flags=re.S)


def test_docs_methods_md_is_current() -> None:
    if overridden_settings():
        pytest.skip(f"the environment overrides {', '.join(overridden_settings())}; the file documents the defaults")
    assert DOC_PATH.exists(), f"docs/methods.md is missing: run {REGENERATE}"
    if DOC_PATH.read_text(encoding="utf-8") != methods_markdown():
        pytest.fail(f"docs/methods.md is out of date with the code: run {REGENERATE} and commit the file")


@pytest.mark.django_db
def test_page_shows_every_formula_and_heading_of_the_file(client) -> None:
    page = client.get("/methods/").content.decode()
    text = DOC_PATH.read_text(encoding="utf-8")
    formulas = _code_blocks(text)
    assert len(formulas) >= 15
    for block in formulas:
        assert escape(block, quote=False) in page, block
    for heading in re.findall(r"^#{2,3} (.+)$", text, flags=re.M):
        assert f">{escape(heading, quote=False)}</h" in page, heading
    # Headings carry the ids the file's links use (GitHub's slugs), so links work in both.
    for anchor in re.findall(r"\]\(#([a-z0-9-]+)\)", text):
        assert f'id="{anchor}"' in page, anchor


@pytest.mark.django_db
def test_page_shows_the_values_in_use_and_the_file_the_defaults(client, settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    settings.HINDSIGHT_MATCHER_THRESHOLD = 0.5
    settings.HINDSIGHT_GRAPH_MIN_SOURCES = 12
    page = client.get("/methods/").content.decode()
    assert 'id="min-n">3</strong>' in page
    assert "match(v, u) when sim(v, u) ≥ 0.5 and" in page
    assert "<td>at least 12</td>" in page
    assert 'id="grader-version"' in page and 'id="log-clip">1e-06<' in page
    text = DOC_PATH.read_text(encoding="utf-8")
    assert "fewer than 10 questions" in text and "sim(v, u) ≥ 0.45 and" in text
    with pytest.raises(CommandError, match=re.escape(f"out of date: run {REGENERATE}")):
        call_command("methods_doc", "--check")


def test_command_writes_the_file_and_checks_it(tmp_path: Path) -> None:
    if overridden_settings():
        pytest.skip(f"the environment overrides {', '.join(overridden_settings())}")
    call_command("methods_doc", "--check")  # the committed file is current
    target = tmp_path / "methods.md"
    target.write_text("# Methods\n\nold text\n", encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(f"{target} is out of date: run {REGENERATE}")):
        call_command("methods_doc", "--check", "--output", str(target))
    call_command("methods_doc", "--output", str(target))
    assert target.read_text(encoding="utf-8") == DOC_PATH.read_text(encoding="utf-8")
    call_command("methods_doc", "--check", "--output", str(target))


def test_command_refuses_overridden_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "HINDSIGHT_MIN_RANKED_N" in METHODS_SETTINGS
    monkeypatch.setenv("HINDSIGHT_MIN_RANKED_N", "3")
    target = tmp_path / "methods.md"
    with pytest.raises(CommandError, match="the environment sets HINDSIGHT_MIN_RANKED_N: unset it"):
        call_command("methods_doc", "--output", str(target))
    assert not target.exists()
