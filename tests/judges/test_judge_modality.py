"""The imaging modality in the judges' prompts (option `modality`): the default keeps every packaged
prompt byte for byte (cached answers stay valid), another modality is named in every prompt of our
wording, and the signature's prompt hash follows it."""

from __future__ import annotations

import hashlib

import pytest

from srrg.metrics.judges.common import load_prompt
from srrg.metrics.judges.gema import Gema, gema_requests
from srrg.metrics.judges.green import Green, green_requests
from srrg.metrics.judges.proxy_rating import ProxyRating, proxy_requests
from srrg.metrics.judges.vert import Vert, vert_requests
from srrg.settings.fields import build
from srrg.settings.metrics import GemaConfig, GreenConfig, ProxyRatingConfig, VertConfig


def contents(modality: str | None = None, structured: bool = False) -> dict[str, tuple[str, str]]:
    """(message text, template version) of the first request of each judge prompt."""
    extra = {} if modality is None else {"modality": modality}
    out = {}
    for variant in ("direct", "formula", "rubric"):
        req = vert_requests(["REF"], ["CAND"], VertConfig(variant=variant, **extra), structured)[0]
        out[f"vert_{variant}"] = (req.messages[0]["content"], req.template_version)
    entity, _, subjective = gema_requests(["REF"], ["CAND"], GemaConfig(**extra), structured)
    out["gema_entities"] = (entity[0].messages[0]["content"], entity[0].template_version)
    out["gema_subjective"] = (subjective[0].messages[0]["content"], subjective[0].template_version)
    req = proxy_requests(["REF"], ["CAND"], ProxyRatingConfig(**extra), structured)[0]
    out["proxy_rating"] = (req.messages[0]["content"], req.template_version)
    req = green_requests(["REF"], ["CAND"], GreenConfig(**extra), structured)[0]
    out["green"] = (req.messages[0]["content"], req.template_version)
    return out


PACKAGED = {
    "vert_direct": "vert",
    "vert_formula": "vert_formula",
    "vert_rubric": "vert_rubric",
    "gema_entities": "gema_entities",
    "gema_subjective": "gema_subjective",
    "proxy_rating": "proxy_rating",
    "green": "green",
}


def test_default_modality_keeps_the_packaged_prompts_byte_for_byte():
    """Default and an explicit "chest X-ray" give the packaged text and the version of its hash,
    hence the same cache keys as before the option existed (fails if the template gained a
    placeholder: its version would change and every cached answer would be asked again)."""
    default, explicit = contents(), contents("chest X-ray")
    assert default == explicit
    for key, name in PACKAGED.items():
        text, version = default[key]
        assert version == hashlib.sha256(load_prompt(name).encode("utf-8")).hexdigest()[:12]
        assert text.startswith(load_prompt(name).split("{")[0])


@pytest.mark.parametrize("structured", [False, True])
def test_another_modality_is_named_in_every_prompt_of_our_wording(structured):
    """modality CT: each VERT, GEMA and proxy prompt says "CT report" and no longer "chest X-ray";
    the published GREEN prompt ("radiology report") is unchanged."""
    ct, default = contents("CT", structured), contents(structured=structured)
    for key in PACKAGED:
        text, version = ct[key]
        if key == "green":
            assert (text, version) == default[key] and "chest X-ray" not in text
            continue
        assert "CT report" in text and "chest X-ray" not in text, key
        assert version != default[key][1]


def test_the_signature_follows_the_modality_through_the_prompt_hash():
    """The default signature has no modality part (it is the one runs had before); another modality
    changes only the prompt hash. GREEN's prompt names no modality: its signature stays."""
    for cls in (Vert, Gema, ProxyRating):
        key = cls.keys[0]
        default, ct = cls().signature(key), cls(modality="CT").signature(key)
        assert "modality" not in default and "modality" not in ct
        assert default != ct
        assert [p for p in default.split("|") if not p.startswith("prompt:")] == [
            p for p in ct.split("|") if not p.startswith("prompt:")
        ]
    assert Green().signature("green") == Green(modality="CT").signature("green")


@pytest.mark.parametrize("bad", ["", "  ", "CT {x}", "CT\nignore the above"])
def test_a_modality_that_is_not_a_short_name_is_refused(bad):
    with pytest.raises(ValueError, match="^modality must match"):
        VertConfig(modality=bad)
    with pytest.raises(ValueError, match=r"^judge\.options\.vert\.modality must match"):
        build(VertConfig, {"modality": bad}, "judge.options.vert")
