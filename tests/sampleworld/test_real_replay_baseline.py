"""real_replay_baseline in one command on an empty embedded database: the archive and the real
questions are imported, the baseline agents (the reference agent among them) forecast them over HTTP
as of their simulated dates, and the table gives their outcome, evidence and reasoning scores with
the builder's pass rate."""

from __future__ import annotations

from pathlib import Path

from tests.embedded_load import EmbeddedSite
from tests.ingestion.test_import_archive import archive_days, write

QUESTIONS = Path(__file__).resolve().parents[1] / "ingestion" / "fixtures" / "archive" / "real_questions.json"


def test_the_baseline_table_in_one_command(tmp_path: Path) -> None:
    archive = write(tmp_path, archive_days("2025-03-20", "2025-05-08"))
    site = EmbeddedSite(var=tmp_path / "var")
    result = site.manage("real_replay_baseline", "--archive", str(archive), "--questions", str(QUESTIONS))

    out = result.stdout
    assert "4 created" in out
    assert "always-half: {201: 3}" in out  # the binary and multiple-choice questions
    assert "reference-offline: {201: 4}" in out
    assert "4 real replay questions (2 binary, 1 multiple choice, 1 quantity)" in out
    assert "| agent | forecasts | Brier (binary, choice) | accuracy | SrcP | source recall | leaks | KER (n) |" in out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert rows["reference-offline"].split("|")[2].strip() == "4"
    # 0.25, 0.25 and, on three options, half the summed 2/3; a forecast at 0.5 or a uniform vector
    # makes no call, so always-half is right on none of them.
    assert rows["always-half"].split("|")[3].strip() == "0.278"
    assert rows["always-half"].split("|")[4].strip() == "0.00"
