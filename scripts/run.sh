#!/usr/bin/env bash
# Set up and run Hindsight on the embedded default (SQLite file under var/, in-process tasks)
# at http://127.0.0.1:8000 with the sample data. Pass --reset to start from an empty database.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
unset DATABASE_URL REDIS_URL
python manage.py demo "$@"
