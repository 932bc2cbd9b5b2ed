"""A real model for the ``real_llm`` suite: llama-cpp-python's OpenAI-compatible server with the
Gemma 3 270M GGUF, started once on 127.0.0.1 (scripts/test-llm.sh installs both and sets
HINDSIGHT_LLM_SERVER_PYTHON and HINDSIGHT_LLM_GGUF; without them every test here is skipped).

Every test hands the stage records of its LLM job to ``measured``; the terminal summary prints
them (prompt tokens, answer tokens, seconds, valid on first try) and writes them to
test-artifacts/real-llm-stages.json.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

SERVER_PYTHON = os.environ.get("HINDSIGHT_LLM_SERVER_PYTHON", "")
GGUF = os.environ.get("HINDSIGHT_LLM_GGUF", "")
MODEL = "gemma-3-270m"
CONTEXT_TOKENS = 8192
# One thread by default: on two cores shared with other work, llama.cpp's threads waiting on each
# other cost more than the second thread gains (measured 37 s with one thread against 98 s with two
# for the same request under load). HINDSIGHT_LLM_SERVER_THREADS=2 suits an idle machine.
THREADS = os.environ.get("HINDSIGHT_LLM_SERVER_THREADS", "1")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Tighter than the defaults so the suite ends in minutes on two cores; docs/operations.md gives both.
STAGE_LIMITS = (
    "hindsight_explanation=256/240,hindsight_graph=1024/480,question_generation=768/300,"
    "question_scoring=192/120,judge=32/300"
)
MEASURED: list[dict[str, Any]] = []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def llm_server() -> Iterator[str]:
    if not SERVER_PYTHON or not GGUF:
        pytest.skip("real_llm: needs the local model server; run scripts/test-llm.sh")
    ARTIFACTS.mkdir(exist_ok=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    command = [
        SERVER_PYTHON,
        "-m",
        "llama_cpp.server",
        "--model",
        GGUF,
        "--model_alias",
        MODEL,
        # The GGUF carries no chat template; llama-cpp-python's Gemma turn format fits the model.
        "--chat_format",
        "gemma",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--n_threads",
        THREADS,
    ]
    with (ARTIFACTS / "llama-server.log").open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while not _ready(url):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the model server did not start; see {ARTIFACTS / 'llama-server.log'}")
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture
def real_llm(settings: Any, llm_server: str) -> str:
    """Point every LLM path at the real model, with the context the server runs."""
    settings.LLM_BASE_URL = llm_server
    settings.LLM_MODEL = MODEL
    settings.LLM_API_KEY = "local"
    settings.LLM_TIMEOUT_SECONDS = 300.0
    settings.LLM_CONTEXT_TOKENS = CONTEXT_TOKENS
    settings.LLM_MAX_OUTPUT_TOKENS = 2048
    settings.LLM_STAGE_LIMITS = STAGE_LIMITS
    settings.LLM_STRUCTURED_OUTPUT = "auto"
    return llm_server


@pytest.fixture
def measured(request: pytest.FixtureRequest) -> Callable[..., None]:
    def record(stages: list[dict[str, Any]], notes: list[str] | None = None) -> None:
        for stage in stages:
            MEASURED.append({"test": request.node.name, **stage, "notes": notes or []})

    return record


def assert_estimates_cover_the_real_counts(stages: list[dict[str, Any]]) -> None:
    """The prompt-budget estimate was never below what the server's tokenizer counted."""
    for stage in stages:
        for call in stage["per_call"]:
            if call["usage_reported"] and call["prompt_tokens"]:
                assert call["estimated_prompt_tokens"] >= call["prompt_tokens"], (stage["stage"], call)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not MEASURED:
        return
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "real-llm-stages.json").write_text(json.dumps(MEASURED, indent=1))
    write = terminalreporter.write_line
    write("")
    write(
        f"LLM stages measured against {MODEL} (llama-cpp-python, {CONTEXT_TOKENS}-token context, {THREADS} thread(s)):"
    )
    write(
        f"{'test / stage':58} {'calls':>5} {'prompt':>7} {'answer':>7} {'seconds':>8}  {'JSON via':11} 1st-try  outcome"
    )
    for row in MEASURED:
        name = f"{row['test'][:30]} / {row['stage']}"
        valid = {None: "-", True: "yes", False: "no"}[row["valid_first_try"]]
        write(
            f"{name:58} {row['calls']:>5} {row['prompt_tokens']:>7} {row['completion_tokens']:>7} "
            f"{row['seconds']:>8.1f}  {row['structured_output'] or '-':11} {valid:7}  {row['outcome']}"
        )
    notes = dict.fromkeys(note for row in MEASURED for note in row["notes"])
    for note in notes:
        write(f"  note: {note[:300]}")
