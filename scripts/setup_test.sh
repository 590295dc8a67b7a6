#!/usr/bin/env bash
# What the test suite needs beyond .venv (scripts/setup.sh), so that `make test` on a fresh machine
# runs what CI runs (.ci/run is `make lint` + `make test`). Four groups, each probed first and
# prepared only when missing, so a second run takes seconds:
#   slurm     the localhost SLURM cluster of the slurm-marked tests (scripts/setup_slurm.sh; root)
#   chromium  headless Chromium for tests/cases/test_cases_browser.py (Debian package; root)
#   radeval   the radeval extra and RadEval 2.2.1 without its dependencies (docs/metrics.md)
#   llama     llama-cpp-python[server] for the real-server tests (scripts/setup_llama_server.sh)
# A group it cannot prepare here (not root, no apt-get, no network) is one line naming the command
# that does; those tests then skip and say why. Under CI (CI set) such a line is a failure.
#
#   bash scripts/setup_test.sh           # prepare what is missing
#   bash scripts/setup_test.sh --check   # only name what is missing (changes nothing)
set -uo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
as_root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && as_root=1
missing=0

skip_line() {  # group, what skips, the command that prepares it
  echo "setup_test: $1 not prepared, $2 will skip; to prepare it: $3" >&2
  missing=$((missing + 1))
}

has_modules() {  # module names: all importable from .venv (found without importing them)
  .venv/bin/python -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))' "$@"
}

# slurm: a cluster that answers sinfo is enough (set up by this script earlier or by an admin)
if ! { command -v sinfo >/dev/null && timeout 10 sinfo -h >/dev/null 2>&1; }; then
  if [ "$check" = 0 ] && [ "$(id -u)" = 0 ] && bash scripts/setup_slurm.sh; then
    :
  else
    skip_line slurm "the slurm-marked tests" "sudo bash scripts/setup_slurm.sh"
  fi
fi

# chromium: any of the names tests/cases/test_cases_browser.py looks for
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
  if [ "$check" = 0 ] && [ "$as_root" = 1 ] && echo "setup_test: installing chromium" >&2 \
    && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    :
  else
    skip_line chromium "tests/cases/test_cases_browser.py" "sudo apt-get install chromium"
  fi
fi

# radeval: what tests/metrics/test_radeval.py and test_hub_probe.py import
radeval_cmd=".venv/bin/pip install -c constraints.txt -e '.[test,radeval]' && .venv/bin/pip install --no-deps -c constraints.txt RadEval==2.2.1"
if ! has_modules radeval rouge_score sklearn dotmap jsonpickle h5py sentencepiece datasets appdirs; then
  if [ "$check" = 0 ] && echo "setup_test: installing the radeval extra and RadEval 2.2.1" >&2 \
    && .venv/bin/pip install -q -c constraints.txt -e '.[test,radeval]' \
    && .venv/bin/pip install -q --no-deps -c constraints.txt RadEval==2.2.1; then
    :
  else
    skip_line radeval "the RadEval tests" "$radeval_cmd"
  fi
fi

# llama: the probe of scripts/setup_llama_server.sh (which builds it from source: minutes, once)
if ! has_modules llama_cpp uvicorn fastapi sse_starlette starlette_context pydantic_settings; then
  if [ "$check" = 0 ] && bash scripts/setup_llama_server.sh; then
    :
  else
    skip_line llama "tests/judges/test_llm_server.py" "bash scripts/setup_llama_server.sh"
  fi
fi

if [ "$missing" -gt 0 ] && [ -n "${CI:-}" ]; then
  echo "setup_test: CI runs every group; $missing not prepared" >&2
  exit 1
fi
exit 0
