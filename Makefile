# Two entry points (see README Quickstart): `make demo` and `make test`. Both set up .venv first;
# `make test` also prepares what the suite needs beyond it (scripts/setup_test.sh), as CI does.
SHELL := /bin/bash
CORES ?= 2
PYTEST_ARGS ?=

.PHONY: setup demo test lint

setup:
	bash scripts/setup.sh

demo: setup
	.venv/bin/snakemake --profile profiles/local --cores $(CORES)

# pytest exits 5 when PYTEST_ARGS select no test: said in one line, and still a failure
test: setup
	bash scripts/setup_test.sh
	.venv/bin/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc = 5 ]; then echo "make test: no test selected (PYTEST_ARGS='$(PYTEST_ARGS)')" >&2; fi; exit $$rc

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/snakemake --lint
	.venv/bin/snakefmt --check Snakefile workflow/rules
	.venv/bin/srrg config-schema --check
