"""Reading the signatures a scored folder carries (docs/metrics.md, "Signatures"): signatures.csv,
else the signature_<metric> columns of summary.csv. Apart from srrg.metrics.signature because a
summary column is matched to its metric through the metric registry (srrg.metrics.base), which
itself composes signatures: one module for both would import in a circle."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from srrg.errors import UserError
from srrg.io import read_csv
from srrg.metrics.base import get_metric
from srrg.metrics.signature import SIGNATURE_COLUMN, SIGNATURES_FILE, SUMMARY_FILE


def _unreadable(path: Path, err: BaseException) -> UserError:
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return UserError(f"{path}: not a readable signature table ({reason}); rescore with srrg score")


def read_signatures(folder_or_file: str | Path) -> dict[str, str]:
    """key -> signature from the signatures.csv beside a summary.csv / per_report.parquet (or the
    file itself). Where that file is missing, empty or holds no row, the signature_<metric>
    columns of the summary.csv beside it (or the summary given) stand in (summary_key_signatures);
    {} when neither has one (a folder scored before signatures existed: unsigned)."""
    import polars as pl

    given = Path(folder_or_file)
    path = given if given.name == SIGNATURES_FILE else given.parent / SIGNATURES_FILE
    if path.is_file():
        try:
            frame = read_csv(path, schema={"key": pl.String, "signature": pl.String})
        except pl.exceptions.NoDataError:  # an empty file: no signature
            frame = pl.DataFrame(schema={"key": pl.String, "signature": pl.String})
        except (pl.exceptions.PolarsError, OSError, ValueError) as err:
            raise _unreadable(path, err) from None
        signatures = {k: s for k, s in zip(frame["key"], frame["signature"]) if k and s}
        if signatures:
            return signatures
    summary = given if given.suffix == ".csv" and given.name != SIGNATURES_FILE else given.parent / SUMMARY_FILE
    return summary_key_signatures(summary) if summary.is_file() else {}


def metric_keys(metric: str) -> tuple[str, ...]:
    """The per-report keys a registered metric declares (none for a name no metric has)."""
    try:
        return tuple(get_metric(metric).keys)
    except KeyError:
        return ()


def key_owner(key: str, metrics: Sequence[str]) -> str | None:
    """Which of the metrics made `key`: the one declaring it, else the longest whose name is the
    key or its prefix (`bleu` for bleu_4, `s_score` for s_score_hyp_valid); None when none did."""
    declared = [m for m in metrics if key in metric_keys(m)]
    named = sorted((m for m in metrics if key == m or key.startswith(f"{m}_")), key=len, reverse=True)
    return (declared or named or [None])[0]


def summary_key_signatures(summary: str | Path) -> dict[str, str]:
    """key -> signature read from a summary.csv's signature_<metric> columns: each value column
    takes its metric's signature (several variants stay joined by ` ; `, so they never match one
    signature); columns of no signed metric are left out."""
    import polars as pl

    try:
        row = read_csv(Path(summary), infer_schema=False, n_rows=1)
    except pl.exceptions.NoDataError:
        return {}
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        raise _unreadable(Path(summary), err) from None
    if row.is_empty():
        return {}
    values = row.row(0, named=True)
    by_metric = {c.removeprefix(SIGNATURE_COLUMN): v for c, v in values.items() if c.startswith(SIGNATURE_COLUMN) and v}
    out = {}
    for key in values:
        owner = None if key.startswith(SIGNATURE_COLUMN) else key_owner(key, list(by_metric))
        if owner:
            out[key] = by_metric[owner]
    return out
