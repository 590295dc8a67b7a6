"""The two kinds of failure a `srrg` command reports without a traceback (docs/cli.md).

A `UserError` is a mistake the user can fix (a missing file, an unknown key, an empty input): the
command prints one line naming the file/key/value and what is allowed, and exits 2. A `StageFailed`
means the inputs were fine but the stage could not produce a result that can be trusted (an LLM
endpoint that stayed down after its retries, too many failed judge answers): one line, exit 1, and
whatever partial output was written stays on disk for inspection. Anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """A fixable mistake in the command line, the config or an input file (exit code 2)."""

    exit_code = 2


class StageFailed(RuntimeError):
    """The stage ran but its result cannot be trusted (exit code 1); partial outputs are kept."""

    exit_code = 1


def one_line(err: BaseException) -> str:
    """The error message on one line (config errors list several problems; an OSError names its
    path)."""
    if isinstance(err, OSError) and err.filename is not None:
        reason = err.strerror or type(err).__name__
        return f"{err.filename}: {reason.lower()} (check the path you gave)"
    return "; ".join(part.strip() for part in str(err).splitlines() if part.strip()) or type(err).__name__
