# Two entry points (see README Quickstart): `make demo` and `make test`. Both set up .venv first;
# `make test` also prepares what the suite needs beyond it (scripts/setup_test.sh), as CI does.
SHELL := /bin/bash
CORES ?= 2
PYTEST_ARGS ?=

.PHONY: setup demo test lint mutation

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

# Mutation testing of a change (docs/mutation.md, "Changed lines"): srrg's own operators on the lines
# `git diff SINCE [UNTIL]` wrote (renames followed, carried forward to HEAD), in a scratch clone of
# HEAD (the driver writes each mutant into the file it tests), a sample of at most MAX mutants per
# module drawn with SEED (TOTAL: then at most TOTAL in all); each mutant against its module's fast
# tests (-x, one thread, a timeout).
# Prints killed / checked per module and for all with the 95 % Wilson interval. Committed work only.
# Example: make mutation SINCE=ca4f82f UNTIL=05dbd51 MUTATE='src/srrg/metaeval src/srrg/config_tree.py'
SINCE ?=
UNTIL ?=
MUTATE ?= src
MAX ?= 5
SEED ?= 53
MUTATION_DIR ?= /tmp/srrg-mutation
mutation:
	@test -n "$(SINCE)" || { echo "make mutation: give SINCE=<commit> (UNTIL, MUTATE, MAX, SEED optional)" >&2; exit 2; }
	rm -rf $(MUTATION_DIR) && git clone -q . $(MUTATION_DIR)
	cd $(MUTATION_DIR) && PYTHONPATH=src OMP_NUM_THREADS=1 nice -n 10 $(CURDIR)/.venv/bin/python tools/mutation.py \
	  --changed-since $(SINCE) $(if $(UNTIL),--changed-until $(UNTIL)) --paths $(MUTATE) \
	  --max-mutants $(MAX) $(if $(TOTAL),--max-total $(TOTAL)) --seed $(SEED) --json $(MUTATION_DIR)/mutation.json
