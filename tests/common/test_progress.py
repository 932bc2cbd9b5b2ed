"""Progress lines: a listening command sees one line per run of batches of the same kind, their
counts added up, in the order the work happened; with no listener each batch is logged."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from common.progress import progress_to, report_progress, report_tally

logger = logging.getLogger("tests.progress")


@dataclass
class Batch:
    done: int

    def __add__(self, other: Batch) -> Batch:
        return Batch(self.done + other.done)

    def summary(self) -> str:
        return f"{self.done} done"


def test_a_run_of_batches_is_one_line_in_order() -> None:
    lines: list[str] = []
    with progress_to(lines.append):
        report_progress(logger, "starting")
        for _ in range(16):
            report_tally(logger, "builds", Batch(50))
        report_progress(logger, "grading")
        report_tally(logger, "builds", Batch(6))
    assert lines == ["starting", "800 done", "grading", "6 done"]


def test_without_a_listener_each_batch_is_logged(caplog: Any) -> None:
    with caplog.at_level(logging.INFO, logger="tests.progress"):
        report_tally(logger, "builds", Batch(50))
        report_tally(logger, "builds", Batch(6))
    assert [r.getMessage() for r in caplog.records] == ["50 done", "6 done"]
