"""The one `srrg` command. Each subcommand lives in its own module as `main(argv) -> int`.

Modules are imported only when their subcommand runs, so `srrg score` does not pay for torch.
"""

from __future__ import annotations

import importlib
import sys

# subcommand -> (module exposing main(argv) -> int, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("srrg.metrics.cli", "score hypotheses against references with registered metrics"),
    "extract": ("srrg.extract.cli", "free-text report sections -> structured reports (MIMIC-STRUC)"),
    "eval-extraction": ("srrg.extract.evaluation", "extraction accuracy against the IU X-ray expert MeSH codes"),
    "train": ("srrg.model.train", "train an image-to-report model (Lightning; DDP/SLURM aware)"),
    "infer": ("srrg.infer", "beam-search predictions for a dataset split"),
    "tables": ("srrg.tables", "result tables in the S-RRG Table 1 / Table 2 layouts"),
    "normalize-locations": ("srrg.normalize", "replace raw location phrases by normalized phrases (rules or LLM)"),
    "ingest": ("srrg.ingest", "read IU X-ray or MIMIC-CXR into studies.parquet"),
    "dataset": ("srrg.dataset", "write Parquet shards per split and manifest.json"),
    "stats": ("srrg.stats", "dataset statistics (S-RRG Fig. 5) as CSV and PNG"),
    "correlate": ("srrg.metaeval.cli", "meta-evaluate metrics against human or LLM-proxy ratings"),
    "judge-train": ("srrg.judge_train.cli", "fine-tune an LLM judge (LoRA/QLoRA) on expert ratings; compare it with zero-shot judges"),
}


def _usage() -> str:
    width = max(len(c) for c in COMMANDS)
    lines = [f"  {name:<{width}}  {help_}" for name, (_, help_) in sorted(COMMANDS.items())]
    return "usage: srrg <command> [options]\n\ncommands:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    if args[0] in {"-V", "--version"}:
        from srrg import __version__

        print(f"srrg {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"srrg: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(command[0])
    return int(module.main(args[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
