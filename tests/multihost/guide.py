"""The operations guide's "Running across hosts" section, read as the multi-host test uses it: the
environment, the commands of each host, the PostgreSQL, Redis and load balancer settings, the table
of what each host needs, and the health checks. The test runs exactly these, with the guide's
stand-in names (``db.internal``, ``change-me`` ...) replaced by its own hosts' addresses and secrets,
so the section cannot say something the platform does not do."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
TITLE = "## Running across hosts"


def section() -> str:
    text = GUIDE.read_text()
    assert TITLE in text, f"docs/operations.md has no '{TITLE}' section"
    return text.split(TITLE, 1)[1].split("\n## ", 1)[0]


def _subsection(title: str) -> str:
    text = section()
    marker = f"\n### {title}\n"
    assert marker in text, f"'{TITLE}' has no '### {title}'"
    return text.split(marker, 1)[1].split("\n### ", 1)[0]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def _table(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _unquote(cell: str) -> str:
    return cell.strip("`").split(" ", 1)[0].strip("`")


@dataclass(frozen=True)
class Needs:
    postgres: bool
    redis: bool
    outbound: bool


def needs() -> dict[str, Needs]:
    """Host kind -> what it must reach: PostgreSQL, Redis, the outside world."""
    found = {}
    for row in _table(_subsection("What each host needs")):
        kind, _, postgres, redis, outbound = row[:5]
        found[_unquote(kind)] = Needs(postgres == "yes", redis == "yes", outbound != "none")
    return found


def environment() -> dict[str, str]:
    (block,) = _blocks(_subsection("The environment"), "env")
    pairs = (line.split("=", 1) for line in block.splitlines() if line and not line.startswith("#"))
    return {key: value for key, value in pairs}


def processes() -> dict[str, list[str]]:
    """Host kind -> its command (argv), from the block whose lines are ``# kind`` then the command."""
    block = _blocks(_subsection("Processes"), "bash")[0]
    lines = block.splitlines()
    return {
        lines[i][2:].strip(): shlex.split(lines[i + 1]) for i in range(0, len(lines), 2) if lines[i].startswith("# ")
    }


def setup_commands() -> list[list[str]]:
    block = _blocks(_subsection("Processes"), "bash")[1]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def _settings(block: str, separator: str) -> dict[str, str]:
    pairs = (line.split(separator, 1) for line in block.splitlines() if line.strip())
    return {key.strip(): value.strip().strip("'") for key, value in pairs}


def postgres_settings() -> tuple[dict[str, str], str]:
    """The server settings and the pg_hba.conf line."""
    text = _subsection("PostgreSQL and Redis")
    hba = re.search(r"`pg_hba\.conf`: `([^`]+)`", text)
    assert hba, "no pg_hba.conf line"
    return _settings(_blocks(text, "conf")[0], "="), hba.group(1)


def redis_settings() -> dict[str, str]:
    return _settings(_blocks(_subsection("PostgreSQL and Redis"), "conf")[1], " ")


def nginx_config() -> str:
    (block,) = _blocks(_subsection("The load balancer"), "nginx")
    return block


def health_checks() -> dict[str, str]:
    """What -> its check, as written (a command or a request)."""
    return {row[0]: row[1].strip("`") for row in _table(_subsection("Health checks and what to monitor"))}


def queue_length_command() -> str:
    """The command that reads the ``grade`` queue's length."""
    match = re.search(r"\*\*queue lengths\*\*: `([^`]+)`", _subsection("Health checks and what to monitor"))
    assert match, "no queue length command"
    return match.group(1)


def substituted(text: str, names: dict[str, str]) -> str:
    """``text`` with the guide's stand-in names replaced (longest first, so none eats another)."""
    for placeholder in sorted(names, key=len, reverse=True):
        text = text.replace(placeholder, names[placeholder])
    return text
