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
