"""The canonical fast path (msgspec decoding + _canonical_parts) on seeded random edits of canonical
JSON: wherever it answers, its report and status are the general path's (decode_json + from_obj +
canonicalize), and parse_indexed indexes exactly the report parse_report reads."""

from __future__ import annotations

import json
import random

import pytest

from srrg import report as R

FINDINGS = [
    {"name": "pleural effusion", "probability": 2, "level": "small", "location": "right lung base"},
    {"name": "cardiomegaly", "probability": 3, "level": None, "location": None},
    {"name": "nodule", "probability": 1, "level": None, "location": "left upper lobe", "size": "2 cm"},
    {"name": "atelectasis", "probability": 3, "level": "mild", "location": "at the bases bilaterally"},
]
NEGATIVES = ["pneumothorax", "consolidation", "edema"]
# pieces that change meaning, shape or spelling: JSON syntax, other types, case, whitespace, escapes
PIECES = [
    '"',
    ",",
    ":",
    "{",
    "}",
    "[",
    "]",
    " ",
    "\n",
    "\t",
    "3.0",
    "true",
    "null",
    "NaN",
    "\\u0041",
    "\ufeff",
    "E",
    "é",
    "effusion",
    '"name": "edema", ',
    '"extra": 1, ',
    "0",
    "-1",
    "1e0",
]


def canonical_text(rng: random.Random) -> str:
    positive = rng.sample(FINDINGS, rng.randint(0, len(FINDINGS)))
    taken = {f["name"] for f in positive}
    negative = [n for n in rng.sample(NEGATIVES, rng.randint(0, len(NEGATIVES))) if n not in taken]
    return json.dumps({"positive": positive, "negative": negative}, ensure_ascii=rng.random() < 0.5)


def edit(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        action = rng.random()
        if action < 0.4:
            text = text[:i] + rng.choice(PIECES) + text[i:]
        elif action < 0.7:
            text = text[:i] + text[i + rng.randint(1, 4) :]
        else:
            text = text[:i] + rng.choice(PIECES) + text[i + 1 :]
    return text


def general(text: str) -> tuple[R.StructuredReport, str]:
    return R._parse_general(text, None) if text.strip() else (R.EMPTY, R.UNPARSEABLE)


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_equals_the_general_path_on_random_edits(seed):
    rng = random.Random(seed)
    texts = [canonical_text(rng) for _ in range(150)]
    texts += [edit(t, rng) for t in texts for _ in range(4)]
    R.clear_parse_caches()
    fast_hits = 0
    for text in texts:
        got = R._parse(text, None)
        assert got == general(text), text
        fast_hits += R._canonical_report(text) is not None
    assert fast_hits >= 150  # every unedited text, and some edits that stay canonical, took the fast path
    indexes, statuses = R.parse_indexed(texts)
    for text, index, status in zip(texts, indexes, statuses):
        report, expected_status = R.parse_report(text)
        assert (index, status) == (R.index_report(report), expected_status), text


def test_parse_indexed_shares_one_index_per_distinct_text_and_reads_non_texts():
    text = json.dumps({"positive": FINDINGS[:2], "negative": NEGATIVES[:1]})
    indexes, statuses = R.parse_indexed([text, None, text, b"{}", "not json"])
    assert indexes[0] is indexes[2] and statuses[0] == statuses[2] == R.VALID
    assert indexes[0] == ({f["name"]: R.Finding(**f) for f in FINDINGS[:2]}, frozenset(NEGATIVES[:1]))
    assert statuses[1] == statuses[3] == statuses[4] == R.UNPARSEABLE and indexes[1] == ({}, frozenset())
    assert R.parse_indexed([]) == ([], [])
    unhashable = [text, ["a list"]]  # not texts: read one by one, as parse_report reads them
    assert R.parse_indexed(unhashable)[1] == [R.VALID, R.UNPARSEABLE]
