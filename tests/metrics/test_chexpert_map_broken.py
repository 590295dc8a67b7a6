"""A broken packaged CheXpert map (vocab/chexpert_map.yaml) is one clear error naming the file,
never a traceback from deep inside the loader nor a silently wrong map (issue 38)."""

from __future__ import annotations

import pytest

from srrg.errors import UserError
from srrg.metrics import chexpert

SHAPE = "expected observations (a list), map (finding -> a list of observations)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("observations: [No Finding\nmap: {\n", "chexpert_map.yaml: not valid YAML (line 2)"),
        ("", SHAPE),
        ("observations: [No Finding, Cardiomegaly]\n", SHAPE),
        ("observations:\nmap:\n  cardiomegaly: [Cardiomegaly]\n", SHAPE),
        ("observations: [No Finding, Cardiomegaly]\nmap: [cardiomegaly]\n", SHAPE),
        ("observations: [No Finding, Cardiomegaly]\nmap:\n  cardiomegaly:\n", SHAPE),
        ("observations: [No Finding, Cardiomegaly]\nmap:\n  cardiomegaly: Cardiomegaly\n", SHAPE),
    ],
    ids=["yaml-syntax", "empty-file", "no-map", "null-observations", "map-a-list", "null-labels", "labels-a-string"],
)
def test_malformed_map_is_one_user_error_naming_the_file(packaged, text: str, message: str) -> None:
    """Bug caught: the loader indexes the YAML as it comes (data["map"], iterating labels), so a
    syntax error, a missing key or a null gives a ParserError/KeyError/TypeError traceback."""
    packaged(text)
    with pytest.raises(UserError) as err:
        chexpert.chexpert_map()
    assert message in str(err.value) and str(err.value).startswith("chexpert_map.yaml: ")
    assert "\n" not in str(err.value)


def test_a_bare_string_of_ignored_findings_is_refused_not_read_as_its_letters(packaged) -> None:
    """Bug caught: frozenset("support devices") is a set of 12 letters, so no finding would be
    ignored for No Finding and no error said so."""
    packaged(
        "observations: [No Finding, Cardiomegaly]\nmap:\n  cardiomegaly: [Cardiomegaly]\n"
        "no_finding_ignores: support devices\n"
    )
    with pytest.raises(UserError, match="no_finding_ignores"):
        chexpert.chexpert_map()


def test_a_well_formed_small_map_loads_exactly(packaged) -> None:
    """The checks refuse only malformed files: a two-observation map reads back field by field."""
    packaged(
        "observations: [No Finding, Cardiomegaly]\nmap:\n  cardiomegaly: [Cardiomegaly]\n"
        "no_finding_ignores: [support devices]\n"
    )
    got = chexpert.chexpert_map()
    assert got.observations == ("No Finding", "Cardiomegaly")
    assert dict(got.findings) == {"cardiomegaly": ("Cardiomegaly",)}
    assert got.no_finding_ignores == frozenset({"support devices"})


def test_the_packaged_map_itself_loads() -> None:
    chexpert.chexpert_map.cache_clear()
    got = chexpert.chexpert_map()
    assert len(got.observations) == 14 and got.findings["hydropneumothorax"] == ("Pneumothorax", "Pleural Effusion")
