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

# The suite on CORES workers (pytest-xdist), each test file on one worker and the slurm tests
# together (tests/conftest.py, docs/workflow.md "Tests"); one thread per worker, so the workers
# share the cores instead of fighting over them. PYTEST_ARGS='-n 0' runs it in one process.
# pytest exits 5 when PYTEST_ARGS select no test: said in one line, and still a failure
test: setup
	bash scripts/setup_test.sh
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 .venv/bin/python -m pytest -n $(CORES) --dist loadgroup --no-loadscope-reorder $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc = 5 ]; then echo "make test: no test selected (PYTEST_ARGS='$(PYTEST_ARGS)')" >&2; fi; exit $$rc

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/snakemake --lint
	.venv/bin/snakefmt --check Snakefile workflow/rules
	.venv/bin/srrg config-schema --check
