"""GREEN parsing side by side with the official implementation's rules (Stanford-AIMI/GREEN:
clean_responses, parse_error_counts, compute_green), on canned answers with hand-derived official
results. Every case agrees with the official scores and counts, or is a deviation that
docs/judges.md names (the `deviation` key is the phrase the docs must contain)."""

from __future__ import annotations

import math

import pytest
from paths import REPO

from srrg.metrics.judges.common import clean_response, parse_error_report
from srrg.metrics.judges.green import score_responses
from srrg.settings.metrics import GreenConfig

DOCS = REPO / "docs" / "judges.md"
Z = (0, 0, 0, 0, 0, 0)


def lines(counts, names=None):
    labels = "abcdef"
    names = names or [
        "False report of a finding in the candidate",
        "Missing a finding present in the reference",
        "Misidentification of a finding's anatomic location/position",
        "Misassessment of the severity of a finding",
        "Mentioning a comparison that isn't in the reference",
        "Omitting a comparison detailing a change from a prior study",
    ]
    return "\n".join(f"({labels[i]}) {names[i]}: {n}." for i, n in enumerate(counts))


FULL = (
    "[Explanation]:\nThe candidate misses the effusion.\n\n"
    f"[Clinically Significant Errors]:\n{lines((1, 1, 0, 0, 0, 0))}\n\n"
    f"[Clinically Insignificant Errors]:\n{lines((0, 0, 1, 0, 0, 0))}\n\n"
    "[Matched Findings]:\n2. Cardiomegaly; Atelectasis\n"
)
TEMPLATE_PART = (
    "[Explanation]:\n    <Explanation>\n\n    [Clinically Significant Errors]:\n"
    "    (a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n    ....\n"
    "    (f) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n\n"
    "    [Clinically Insignificant Errors]:\n"
    "    (a) <Error Type>: <The number of errors>. <Error 1>; <Error 2>; ...; <Error n>\n\n"
    "    [Matched Findings]:\n    <The number of matched findings>. <Finding 1>; <Finding 2>; ...; <Finding n>\n"
    "    ```\n"
)

# name -> (answer, official (significant counts, matched, green), our status, deviation phrase or None)
CASES = {
    "well_formed": (FULL, ((1, 1, 0, 0, 0, 0), 2, 0.5), "ok", None),
    "no_errors_sentence": (
        "[Explanation]:\nSame.\n\n[Clinically Significant Errors]:\nNo clinically significant errors.\n\n"
        "[Clinically Insignificant Errors]:\nNo clinically insignificant errors.\n\n[Matched Findings]:\n3. a; b; c\n",
        (Z, 3, 1.0),
        "ok",
        None,
    ),
    "none_word": (
        "[Clinically Significant Errors]:\nNone.\n\n[Clinically Insignificant Errors]:\nNone.\n\n[Matched Findings]:\n"
        "1. a\n",
        (Z, 1, 1.0),
        "ok",
        None,
    ),
    "lowercase_no_errors": (
        "[Clinically Significant Errors]:\nno errors found\n\n[Clinically Insignificant Errors]:\nNo errors.\n\n"
        "[Matched Findings]:\n1. a\n",
        (Z, 1, 1.0),
        "partial",
        None,
    ),
    "missing_insignificant": (
        "[Clinically Significant Errors]:\n" + lines((0, 1, 0, 0, 0, 0)) + "\n\n[Matched Findings]:\n1. a\n",
        ((0, 1, 0, 0, 0, 0), 1, 0.5),
        "partial",
        None,
    ),
    "missing_significant": (
        "[Explanation]:\nok\n\n[Matched Findings]:\n2. effusion; edema\n",
        (Z, 2, 1.0),
        "partial",
        None,
    ),
    "missing_matched": (
        "[Clinically Significant Errors]:\n" + lines((2, 0, 0, 0, 0, 0)) + "\n",
        ((2, 0, 0, 0, 0, 0), 0, 0.0),
        "partial",
        None,
    ),
    "matched_zero": (
        "[Clinically Significant Errors]:\n"
        + lines((1, 0, 0, 0, 0, 0))
        + "\n\n[Clinically Insignificant Errors]:\nNo.\n\n[Matched Findings]:\n0.\n",
        ((1, 0, 0, 0, 0, 0), 0, 0.0),
        "ok",
        None,
    ),
    "extra_whitespace": (
        "[Clinically Significant Errors]:   \n\n    "
        + lines((1, 0, 0, 0, 0, 0)).replace("\n", "\n    ")
        + "\n\n[Clinically Insignificant Errors]:\n  No errors.\n\n[Matched Findings]:\n    3. a; b; c\n",
        ((1, 0, 0, 0, 0, 0), 3, 0.75),
        "ok",
        None,
    ),
    "markdown_bold_headers": (
        "**[Clinically Significant Errors]:**\n"
        + lines((1, 0, 0, 0, 0, 0))
        + "\n\n**[Clinically Insignificant Errors]:**\nNo.\n\n"
        "**[Matched Findings]:**\n2. a; b\n",
        ((1, 0, 0, 0, 0, 0), 0, 0.0),
        "partial",
        None,
    ),
    "markdown_bold_counts": (
        "[Clinically Significant Errors]:\n(a) False report: **1**.\n(b) Missing: 1.\n\n"
        "[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n2. a; b\n",
        ((0, 1, 0, 0, 0, 0), 2, 2 / 3),
        "partial",
        None,
    ),
    "count_without_period": (
        "[Clinically Significant Errors]:\n(a) False report: 1\n(b) Missing: 2.\n\n"
        "[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n2. a; b\n",
        ((0, 2, 0, 0, 0, 0), 2, 0.5),
        "partial",
        None,
    ),
    "colon_without_space": (
        "[Clinically Significant Errors]:\n(a) False report:1.\n\n[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n1. a\n",
        (Z, 1, 1.0),
        "partial",
        None,
    ),
    "decimal_count": (
        "[Clinically Significant Errors]:\n(a) False report: 1.5. x\n\n[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n1. a\n",
        ((1, 0, 0, 0, 0, 0), 1, 0.5),
        "ok",
        None,
    ),
    "first_count_after_colon": (
        "[Clinically Significant Errors]:\n(b) Missing: 2. It also says 3.\n\n[Clinically Insignificant Errors]:\n"
        "No.\n\n"
        "[Matched Findings]:\n2. a; b\n",
        ((0, 2, 0, 0, 0, 0), 2, 0.5),
        "ok",
        None,
    ),
    "matched_not_leading_number": (
        "[Clinically Significant Errors]:\nNo.\n\n[Clinically Insignificant Errors]:\nNo.\n\n[Matched Findings]:\n"
        "3 findings matched. a; b; c\n",
        (Z, 0, 0.0),
        "partial",
        None,
    ),
    "duplicated_lines": (
        "[Clinically Significant Errors]:\n(a) False: 1. x\n(a) False: 1. x\n(a) False: 1. x\n\n"
        "[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n1. y\n",
        ((1, 0, 0, 0, 0, 0), 1, 0.5),
        "ok",
        None,
    ),
    "duplicate_last_sorted_wins": (
        "[Clinically Significant Errors]:\n(a) False: 3. z\n(a) False: 1. x\n\n[Clinically Insignificant Errors]:\n"
        "No.\n\n"
        "[Matched Findings]:\n1. y\n",
        ((3, 0, 0, 0, 0, 0), 1, 0.25),
        "ok",
        None,
    ),
    "reversed_order": (
        "[Clinically Significant Errors]:\n(f) Omitting: 1.\n(b) Missing: 2.\n(a) False: 0.\n\n"
        "[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n1. y\n",
        ((0, 2, 0, 0, 0, 1), 1, 0.25),
        "ok",
        None,
    ),
    "numbered_categories": (
        "[Clinically Significant Errors]:\n(1) False report: 0.\n(2) Missing: 2. a; b\n\n"
        "[Clinically Insignificant Errors]:\nNo errors.\n\n"
        "[Matched Findings]:\n2. c; d\n",
        ((0, 2, 0, 0, 0, 0), 2, 0.5),
        "ok",
        None,
    ),
    "blank_line_ends_section": (
        "[Clinically Significant Errors]:\n(a) False report: 1.\n\n(b) Missing: 4.\n\n"
        "[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\n1. x\n",
        ((1, 0, 0, 0, 0, 0), 1, 0.5),
        "ok",
        None,
    ),
    "chat_marker_and_prompt": (
        "<|user|>\nObjective: evaluate ... [Explanation]:\n<Explanation>\n<|assistant|>\n" + FULL + "</s>",
        ((1, 1, 0, 0, 0, 0), 2, 0.5),
        "ok",
        None,
    ),
    "preamble_before_explanation": ("Sure, here is my assessment.\n" + FULL, ((1, 1, 0, 0, 0, 0), 2, 0.5), "ok", None),
    "one_leftover_template_line": (
        "[Clinically Significant Errors]:\n"
        + lines((1, 0, 0, 0, 0, 0)).replace(
            "(f) Omitting a comparison detailing a change from a prior study: 0.",
            "(f) <Error Type>: <The number of errors>. <Error 1>",
        )
        + "\n\n[Clinically Insignificant Errors]:\nNo.\n\n[Matched Findings]:\n3. a; b; c\n",
        ((1, 0, 0, 0, 0, 0), 3, 0.75),
        "partial",
        None,
    ),
    "words_as_counts": (
        "[Clinically Significant Errors]:\n(a) False report: two. x; y\n\n[Clinically Insignificant Errors]:\nNo.\n\n"
        "[Matched Findings]:\nthree. a; b; c\n",
        (Z, 0, 0.0),
        "ok",
        "number_words",
    ),
    "template_echo_only": (TEMPLATE_PART, (Z, 0, 0.0), "unparseable", "echoed answer template"),
    "echoed_template_then_answer": (TEMPLATE_PART + FULL, (Z, 0, 0.0), "unparseable", "echoed answer template"),
    "no_sections": ("I cannot evaluate these reports.", (Z, 0, 0.0), "unparseable", "unparseable"),
    "only_insignificant": (
        "[Clinically Insignificant Errors]:\n" + lines((1, 0, 0, 0, 0, 0)) + "\n",
        (Z, 0, 0.0),
        "unparseable",
        "unparseable",
    ),
    "empty": ("", (Z, 0, 0.0), "unparseable", "unparseable"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_official_or_names_the_deviation(name):
    answer, (sig, matched, green), status, deviation = CASES[name]
    res = score_responses([answer])
    report = parse_error_report(answer, number_words=True)
    assert report.status == status
    ours = res.per_report["green"][0]
    if deviation is None:
        assert report.significant == sig and report.matched == matched
        assert ours == pytest.approx(green)
        assert [res.per_report[f"green_sig_{c}"][0] for c in "abcdef"] == list(sig)
    else:
        assert deviation in DOCS.read_text(encoding="utf-8"), f"docs/judges.md must name the deviation {deviation!r}"
        official_parser = parse_error_report(answer, number_words=False)
        if status == "unparseable":
            assert math.isnan(ours) and math.isnan(res.per_report["green_sig_a"][0])
        else:  # number words: with number_words off, ours is the official result
            assert official_parser.significant == sig and official_parser.matched == matched
            assert score_responses([answer], GreenConfig(number_words=False)).per_report["green"][0] == pytest.approx(
                green
            )


def test_cleaner_rules():
    assert clean_response("prompt <|assistant|>\n[Explanation]:\nA</s><unk>") == "\nA"
    # an echoed indented template: the official cleaner keeps the part between the first two markers
    echoed = "[Explanation]:\n    <Explanation>\n\nX\n[Explanation]:\nreal"
    assert clean_response(echoed) == "\n    <Explanation>\n\nX\n"
    # the un-indented template does not trigger that rule (as in the official code): last marker
    assert clean_response("[Explanation]:\n<Explanation>\n[Explanation]:\nreal") == "\nreal"
    assert clean_response("no markers at all") == "no markers at all"
