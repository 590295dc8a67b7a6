"""Caches keep phrase-sized keys only, and json-repair never sees megabytes (docs/inputs.md, docs/report.md)."""

from __future__ import annotations

import json
import time

from srrg import report
from srrg.metrics import sscore
from srrg.text import spelling


def test_plain_spelling_caches_phrases_but_not_long_texts():
    phrase = "  Left   LOWER lobe "
    assert spelling.plain_spelling(phrase) == "left lower lobe"
    size = spelling._cached.cache_info().currsize
    long_text = "Mild  Cardiomegaly. " * 20  # 400 characters: a report, not a phrase
    assert spelling.plain_spelling(long_text) == ("mild cardiomegaly. " * 20).strip()
    assert spelling.plain_spelling("x" * spelling.CACHE_MAX_CHARS) == "x" * spelling.CACHE_MAX_CHARS
    assert spelling._cached.cache_info().currsize <= size + 1  # the 256-character value only


def test_broken_json_over_the_repair_cap_is_unparseable_at_once():
    broken = '{"positive": [], "negative": [' + '"effusion", ' * 7000  # ~84,000 characters, no closing
    assert len(broken) > report.REPAIR_MAX_CHARS
    start = time.perf_counter()
    assert report.decode_json(broken) == (None, False)
    assert report.parse_report(broken)[1] == report.UNPARSEABLE
    assert time.perf_counter() - start < 5.0  # ~0.1 s; wide for a loaded machine
    short = '{"positive": [], "negative": ["effusion",'  # under the cap: still repaired
    assert report.parse_report(short) == (report.StructuredReport((), ("pleural effusion",)), report.REPAIRED)
    strict = json.dumps({"positive": [], "negative": [f"finding {i}" for i in range(8000)]})
    assert len(strict) > report.REPAIR_MAX_CHARS and report.parse_report(strict)[1] == report.VALID


def test_long_location_pairs_are_scored_without_the_cache():
    ref, hyp = "left lower lobe " * 20, "left lower lobe " * 19 + "right"
    assert len(ref) + len(hyp) > sscore.LOCATION_CACHE_MAX_CHARS
    size = sscore.location_bleu.cache_info().currsize
    value = sscore.location_score(ref, hyp)
    assert sscore.location_bleu.cache_info().currsize == size
    assert value == sscore.location_bleu.__wrapped__(ref, hyp) and 0.9 < value < 1.0
    assert sscore.location_score("left base cache probe", "right base") == sscore.location_bleu(
        "left base cache probe", "right base"
    )
    assert sscore.location_bleu.cache_info().currsize == size + 1
