#!/usr/bin/env bash
# Set up and run Hindsight on the embedded default (SQLite file under var/, in-process tasks)
# at http://127.0.0.1:8000 with the sample data. Pass --reset to start from an empty database.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
unset DATABASE_URL REDIS_URL
# The site is used, not debugged: a missing page shows the site's own 404, never Django's debug
# page (DJANGO_DEBUG=1 brings that back for development).
export DJANGO_DEBUG="${DJANGO_DEBUG:-0}"
python manage.py demo "$@"
