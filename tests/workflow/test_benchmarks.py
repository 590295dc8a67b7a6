"""Every rule that runs a stage writes Snakemake's benchmark TSV (docs/workflow.md, "Sizing
resources from the benchmark files"): `benchmark: benchmarks_dir("<rule>", "<wildcards>.tsv")`, one
file per job under <results_dir>/benchmarks/<rule>/. Read from the .smk text, rule by rule; the
workflow test in test_workflow_data.py checks that a run writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULES_DIR = REPO / "workflow" / "rules"

_RULE = re.compile(r"^\s*(?:rule|checkpoint) (\w+):", re.M)
_BENCHMARK = re.compile(r'benchmark:\s*\n\s*benchmarks_dir\("(\w+)", (f?"[^"]+")\)')
_LOG = re.compile(r'log:\s*\n\s*logs\((?:[^()]*, )?(f?"[^"]+")\),')


def rule_blocks(texts: Iterable[str]) -> dict[str, str]:
    """Rule name -> its text (up to the next rule), for rules and checkpoints at any indentation."""
    blocks = {}
    for text in texts:
        starts = [m.start() for m in _RULE.finditer(text)]
        for begin, end in zip(starts, [*starts[1:], len(text)], strict=False):
            blocks[_RULE.match(text, begin).group(1)] = text[begin:end]
    return blocks


def benchmark_problems(blocks: dict[str, str]) -> dict[str, str]:
    """Rule -> what is wrong with its benchmark, for every rule whose job runs `python -m srrg`."""
    problems = {}
    for rule, block in sorted(blocks.items()):
        if "python -m srrg" not in block:
            continue
        bench, log = _BENCHMARK.search(block), _LOG.search(block)
        if bench is None:
            problems[rule] = "no benchmark"
        elif bench.group(1) != rule:
            problems[rule] = f"benchmark under {bench.group(1)}/"
        elif log is None or bench.group(2) != log.group(1).removesuffix('.log"').removesuffix(".log") + '.tsv"':
            # the log names every wildcard of the job: the same name keeps one TSV per job
            problems[rule] = f"benchmark {bench.group(2)} is not named like its log"
    return problems


BLOCKS = rule_blocks(p.read_text(encoding="utf-8") for p in sorted(RULES_DIR.glob("*.smk")))


def test_every_stage_rule_declares_its_benchmark() -> None:
    """A stage rule without `benchmark:` leaves its resources unsized; one writing another rule's
    folder, or a name without the job's wildcards, has jobs overwrite each other's TSV."""
    runs_stage = [r for r, b in BLOCKS.items() if "python -m srrg" in b]
    assert len(runs_stage) >= 30
    assert {"ingest", "dataset_plan", "dataset_shard", "score", "judge", "metaeval_rank"} <= set(runs_stage)
    assert benchmark_problems(BLOCKS) == {}


def test_a_missing_or_misnamed_benchmark_is_reported() -> None:
    """The check fails on a synthetic rule without a benchmark, one in another rule's folder and
    one without its job's wildcards (a check that never matches would pass the real rules)."""
    rule = (
        'rule {name}:\n    log:\n        logs("score", "{{run}}.log"),\n{bench}    shell:\n'
        '        "python -m srrg score > {{log}}"\n'
    )
    good = '    benchmark:\n        benchmarks_dir("{name}", "{{run}}.tsv")\n'
    texts = [
        rule.format(name="a", bench=""),
        rule.format(name="b", bench=good.format(name="a")),
        rule.format(name="c", bench='    benchmark:\n        benchmarks_dir("c", "c.tsv")\n'),
        rule.format(name="d", bench=good.format(name="d")),
        'rule e:\n    input:\n        "x"\n',
    ]
    assert benchmark_problems(rule_blocks(texts)) == {
        "a": "no benchmark",
        "b": "benchmark under a/",
        "c": 'benchmark "c.tsv" is not named like its log',
    }
