# Two entry points (see README Quickstart): `make demo` and `make test`. Both set up .venv first.
SHELL := /bin/bash
CORES ?= 2

.PHONY: setup demo test lint

setup:
	bash scripts/setup.sh

demo: setup
	.venv/bin/snakemake --profile profiles/local --cores $(CORES)

test: setup
	.venv/bin/python -m pytest

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/snakemake --lint
	.venv/bin/snakefmt --check Snakefile workflow/rules
	.venv/bin/srrg config-schema --check
