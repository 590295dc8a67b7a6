"""The garbage-collector policy of the hot loops that allocate millions of small objects
(extraction, report parsing).

They create tokens, spans and dicts that die young and form no reference cycles worth chasing,
yet the default generation-0 threshold (700 allocations) runs a collection every few hundred
objects, each one also scanning the long-lived vocabulary and matcher objects: 29-41 % of the
extraction time. Inside `relaxed_gc()` the objects alive on entry are frozen (never scanned) and
generation 0 is collected every 50,000 allocations; the previous policy comes back on exit.
Collection only ever frees unreachable objects, so results are the same either way.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

GEN0_THRESHOLD = 50_000


@contextmanager
def relaxed_gc() -> Iterator[None]:
    """Freeze what is alive and raise the gen-0 threshold for the duration of the block."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(GEN0_THRESHOLD, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()
