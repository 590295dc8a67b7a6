"""The fast path's Finding builder (report._new_finding) makes the object Finding's own __init__ makes."""

from __future__ import annotations

import dataclasses

import pytest

from srrg import report as R


@pytest.mark.parametrize(
    "fields",
    [
        ("atelectasis", 3, "mild", "in the left lower lobe", None),
        ("nodule", None, None, None, "2 cm"),
        ("edema", 1, None, None, None),
    ],
)
def test_new_finding_equals_the_dataclass_constructor(fields: tuple) -> None:
    built, expected = R._new_finding(*fields), R.Finding(*fields)
    assert type(built) is R.Finding
    assert built == expected and hash(built) == hash(expected) and repr(built) == repr(expected)
    assert dataclasses.astuple(built) == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "other"  # type: ignore[misc]


def test_a_fast_path_report_equals_the_general_paths() -> None:
    finding = '{"name": "atelectasis", "probability": 2, "level": "mild", "location": null}'
    text = f'{{"positive": [{finding}], "negative": ["edema"]}}'
    R.clear_parse_caches()
    fast = R._canonical_report(text)
    assert fast is not None and fast == R._parse_general(text, None)[0]
