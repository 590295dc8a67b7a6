"""The `dataset` section: Parquet shards per split (srrg dataset-plan, dataset-shard,
dataset-manifest; docs/workflow.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from srrg.settings.fields import Settings, SettingsError, doc

# the levels Parquet's codecs accept (pyarrow: zstd 1-22, gzip 1-9); the other codecs take none
LEVELS = {"zstd": (1, 22), "gzip": (1, 9)}


@dataclass(frozen=True)
class DatasetConfig(Settings):
    """Parquet shards per split (srrg dataset-plan, dataset-shard, dataset-manifest)."""

    rows_per_shard: int = field(
        default=20000,
        metadata=doc(
            "Rows per part-NNNNN.parquet; each split has ceil(rows / rows_per_shard) shards (at least one).", minimum=1
        ),
    )
    row_group_size: int = field(default=2000, metadata=doc("Parquet row group size.", minimum=1))
    compression: Literal["zstd", "snappy", "lz4", "gzip", "uncompressed"] = field(
        default="zstd", metadata=doc("Parquet compression codec of the shards.")
    )
    compression_level: int | None = field(
        default=3, metadata=doc("Level of zstd (1-22) or gzip (1-9); the other codecs take none (ignored).")
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        low, high = LEVELS.get(self.compression, (None, None))
        level = self.compression_level
        if low is not None and level is not None and not low <= level <= high:
            raise SettingsError("compression_level", f"{level} is out of range for {self.compression} ({low}-{high})")
