"""The one `srrg` command. Each subcommand lives in its own module as `main(argv) -> int`.

Modules are imported only when their subcommand runs, so `srrg score` does not pay for torch.
"""

from __future__ import annotations

import importlib
import sys

# subcommand -> (module exposing main(argv) -> int, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("srrg.metrics.cli", "score hypotheses against references with registered metrics"),
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
