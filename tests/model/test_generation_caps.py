"""Generation length caps, reached: both sides of `max_new_tokens` and of the baseline's
`max_target_tokens` (docs/model.md).

The model of tests/model/test_beam_search_exact.py may only emit "a", "b" or "c" (never the end token), so
every generation runs until a cap stops it and the output length shows which cap did. The search
is unconstrained: the report grammar (tests/model/test_constrained.py) would end the reports.
"""

from __future__ import annotations

import pytest
import torch
from test_beam_search_exact import restricted_model

from srrg.settings.model import InferConfig

pytestmark = pytest.mark.slow

MAX_TARGET = 16  # restricted_model's max_target_tokens


def lengths(net, max_new_tokens: int, num_beams: int = 1) -> list[int]:
    torch.manual_seed(0)
    out = net.generate(
        torch.randn(2, 3, 32, 32),
        InferConfig(num_beams=num_beams, num_return_sequences=1, max_new_tokens=max_new_tokens, constrained=False),
    )
    return [len(texts[0]) for texts in out]  # one character token each


@pytest.fixture(scope="module")
def baseline():
    return restricted_model("baseline")[0]


@pytest.fixture(scope="module")
def llm():
    return restricted_model("llm")[0]


@pytest.mark.parametrize(
    "max_new_tokens, expected",
    [(MAX_TARGET - 1, MAX_TARGET - 1), (MAX_TARGET, MAX_TARGET), (MAX_TARGET + 1, MAX_TARGET)],
)
def test_baseline_stops_at_the_smaller_of_the_two_caps(baseline, max_new_tokens, expected):
    assert lengths(baseline, max_new_tokens) == [expected, expected]


def test_baseline_with_the_default_inference_cap_stops_at_its_target_length(baseline):
    # InferConfig's default asks for more tokens than this model was built for: the decoder has
    # positions for max_target_tokens only, so the search must stop there instead of failing
    default = InferConfig().max_new_tokens
    assert default > MAX_TARGET
    assert lengths(baseline, default, num_beams=2) == [MAX_TARGET, MAX_TARGET]


@pytest.mark.parametrize("max_new_tokens", [1, 4, 5])
def test_frozen_llm_generates_exactly_max_new_tokens_without_an_end_token(llm, max_new_tokens):
    assert lengths(llm, max_new_tokens) == [max_new_tokens, max_new_tokens]
