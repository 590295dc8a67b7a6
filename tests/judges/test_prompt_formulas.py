"""Every prompt that states a scoring rule states the one its column computes: the weights are read
out of the prompt text and compared with the code's constants, so the two cannot drift apart."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from srrg.metrics.judges.common import load_prompt, structured_template
from srrg.metrics.judges.vert import FORMULAS, STATED_FORMULAS, VARIANTS

RULE = re.compile(r"^score = (.+) / \((.+)\)$", re.MULTILINE)
TERM = re.compile(r"^(?:(\d*\.?\d+) \* )?([MSI])$")


def stated_weights(prompt: str) -> tuple[float, float, float] | None:
    """(a, bS, bI) of the prompt's `score = a * M / (a * M + bS * S + bI * I)` line; None when the
    prompt states no rule. A term left out has weight 0; the numerator's M must have the
    denominator's weight."""
    match = RULE.search(prompt)
    if match is None:
        return None
    numerator, denominator = match.groups()

    def weights(expr: str) -> dict[str, float]:
        out = {}
        for term in expr.split(" + "):
            parsed = TERM.match(term.strip())
            assert parsed, f"unreadable term {term!r} in {match.group(0)!r}"
            out[parsed.group(2)] = float(parsed.group(1) or 1)
        return out

    num, den = weights(numerator), weights(denominator)
    assert set(num) == {"M"} and num["M"] == den["M"], match.group(0)
    return den["M"], den.get("S", 0.0), den.get("I", 0.0)


def prompt_names() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files("srrg").joinpath("prompts").iterdir() if p.name.endswith(".txt"))


def test_the_parser_reads_the_unified_family():
    """The reader itself, on hand-written rules (a parser that ignored coefficients would pass the
    drift check below with any weights)."""
    assert stated_weights("x\nscore = M / (M + S + 0.5 * I)\n") == (1.0, 1.0, 0.5)
    assert stated_weights("score = 2 * M / (2 * M + S)") == (2.0, 1.0, 0.0)
    assert stated_weights("no rule here") is None


@pytest.mark.parametrize("name", prompt_names())
def test_a_stated_rule_is_its_columns_rule(name):
    """A prompt that states a rule names a column (STATED_FORMULAS) whose weights are the stated
    ones: fails on the old VERT formula prompt (M + S + 0.5 I against weighted_formula's 2 S), and
    on a new prompt stating a rule that no column computes."""
    weights = stated_weights(load_prompt(name))
    if weights is None:
        assert name not in STATED_FORMULAS
        return
    assert name in STATED_FORMULAS, f"prompt {name} states {weights} but no column is tied to it"
    assert weights == FORMULAS[STATED_FORMULAS[name]]


def test_the_structured_formula_prompt_keeps_the_rule():
    """The structured form replaces only the answer format: the rule stays in the task text."""
    prompt = structured_template(
        VARIANTS["formula"], "Answer in exactly this format", "answer_error_counts_score", ("reference", "candidate")
    )
    assert stated_weights(prompt.messages[0][1]) == FORMULAS["weighted_formula"] == (1.0, 2.0, 0.5)
