"""A ratings dataset read by its adapter's reader (srrg.metaeval.readers), with the options that
adapter takes (srrg.settings.metaeval.ADAPTER_OPTIONS: one place for their defaults; `srrg
metaeval-prepare --options` and a config's metaeval.datasets.*.options build them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.metaeval.readers.common import RatingsDataset
from srrg.metaeval.readers.radeval_expert import read_radeval_expert
from srrg.metaeval.readers.radevalx import read_radevalx
from srrg.metaeval.readers.radpref import read_radpref
from srrg.metaeval.readers.rate_eval import read_rate_eval
from srrg.metaeval.readers.rexval import read_rexval
from srrg.settings.metaeval import ADAPTER_OPTIONS

READERS: dict[str, Callable[[str | Path, Any], RatingsDataset]] = {
    "rexval": read_rexval,
    "radpref": read_radpref,
    "rate_eval": read_rate_eval,
    "radevalx": read_radevalx,
    "radeval_expert": read_radeval_expert,
}


def load_dataset(adapter: str, path: str | Path, **options: Any) -> RatingsDataset:
    """Read a ratings dataset with the named adapter; options: that adapter's keys (its class in
    ADAPTER_OPTIONS), an unknown key or a refused value is one line naming it."""
    if adapter not in READERS:
        raise UserError(f"unknown ratings adapter {adapter!r}; available: {sorted(READERS)}")
    settings = from_dict(ADAPTER_OPTIONS[adapter], options, f"{adapter}.options")
    return READERS[adapter](path, settings)
