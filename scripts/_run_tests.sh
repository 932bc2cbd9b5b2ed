#!/usr/bin/env bash
# Inside scripts/with-services.sh: migration check, the suite on PostgreSQL, the dual-database
# tests again on SQLite.
set -euo pipefail
if [ $# -gt 0 ]; then
  exec python -m pytest "$@"
fi
echo "== makemigrations --check"
python manage.py makemigrations --check --dry-run --settings=config.settings.test
echo "== pytest on PostgreSQL + Redis"
python -m pytest
echo "== pytest (dual_db) on SQLite"
sqlite_dir=$(mktemp -d)
trap 'rm -rf "$sqlite_dir"' EXIT
DATABASE_URL="sqlite:///$sqlite_dir/test.sqlite3" python -m pytest -m dual_db -q -p no:randomly
