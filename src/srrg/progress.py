"""Progress of long loops that reads well in a terminal and in a log file (docs/cli.md).

In a terminal a tqdm bar redraws itself with carriage returns; a Snakemake or SLURM log file would
keep every redraw on one ever-growing line. Without a terminal, progress is one plain line at each
tenth of the work and at the end (`extract: 5/10 chunk (50%) 3.2 s`), written through logging.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("srrg.progress")
STEPS = 10  # plain lines per loop: one at each tenth


class Progress:
    """A counter with tqdm's update()/close() interface: a bar on a terminal, plain lines otherwise."""

    def __init__(self, total: int | None, desc: str, unit: str = "it", disable: bool = False) -> None:
        self.total, self.desc, self.unit, self.disable = total, desc, unit, disable
        self.done, self.next_line, self.start = 0, 1, time.perf_counter()
        self.bar: Any = None
        if not disable and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif not self.disable and self.total and self.done * STEPS >= self.next_line * self.total:
            self.next_line = self.done * STEPS // self.total + 1
            log.info("%s", self.line())

    def line(self) -> str:
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        of = f"/{self.total}" if self.total is not None else ""
        return f"{self.desc}: {self.done}{of} {self.unit}{share} {time.perf_counter() - self.start:.1f} s"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif not self.disable and not self.total:
            log.info("%s", self.line())  # a loop of unknown length says once how far it got


def tracked(
    items: Iterable[T], desc: str, unit: str = "it", total: int | None = None, disable: bool = False
) -> Iterator[T]:
    """Iterate over items while reporting progress (total: len(items) when it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    counter = Progress(total, desc, unit, disable)
    try:
        for item in items:
            yield item
            counter.update()
    finally:
        counter.close()
