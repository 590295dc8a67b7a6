"""Scripted judge answers in the documented GREEN/VERT format, shared by the judge tests."""

from __future__ import annotations

from srrg.metrics.judges.common import CATEGORIES, CATEGORY_NAMES


def green_answer(
    sig: tuple[int, ...], matched: int, insig: tuple[int, ...] = (0,) * 6, score: str | None = None
) -> str:
    """A well-formed answer with the given counts (and a VERT [Score] section when score is given)."""
    sig_lines = "\n".join(f"({c}) {CATEGORY_NAMES[c]}: {n}." for c, n in zip(CATEGORIES, sig))
    insig_lines = "\n".join(f"({c}) {CATEGORY_NAMES[c]}: {n}." for c, n in zip(CATEGORIES, insig))
    names = "; ".join(f"finding {i}" for i in range(1, matched + 1))
    text = (
        "[Explanation]:\nThe candidate is compared with the reference.\n\n"
        f"[Clinically Significant Errors]:\n{sig_lines}\n\n"
        f"[Clinically Insignificant Errors]:\n{insig_lines}\n\n"
        f"[Matched Findings]:\n{matched}. {names}\n"
    )
    if score is not None:
        text += f"\n[Score]:\n{score}\n"
    return text


# The 5-pair behaviour of the official GREEN example: scores 0, 1/6, 1/3, 1/2, 1/4
FIVE_PAIRS = [
    green_answer((1, 0, 0, 0, 0, 0), 0),  # no matched finding -> 0
    green_answer((2, 1, 1, 1, 0, 0), 1),  # 1 / (1 + 5)
    green_answer((1, 1, 0, 0, 0, 0), 1),  # 1 / (1 + 2)
    green_answer((0, 1, 0, 0, 0, 0), 1),  # 1 / (1 + 1)
    green_answer((1, 1, 1, 0, 0, 0), 1),  # 1 / (1 + 3)
]


def stub_llm_config(base_url: str, cache_dir: str, structured: bool | None = False) -> dict:
    """The `llm` slice pointing at a local scripted OpenAI-compatible server (tests/openai_stub.py);
    the stub's scripted answers are text, so structured answers are off unless a test asks."""
    return {
        "structured": structured,
        "backend": "openai",
        "model": "stub-judge",
        "base_url": base_url,
        "api_key_env": "SRRG_JUDGE_TEST_KEY",
        "cache_dir": cache_dir,
        "timeout_s": 60.0,  # wide: no stub answer may time out on a loaded machine
        "max_retries": 2,
        "retry_base_delay_s": 0.01,
        "retry_max_delay_s": 0.02,
        "concurrency": 4,
    }


class ScriptedClient:
    """A judge client that answers from a list, in order (one answer per request); describe()
    names it in failure messages."""

    def __init__(self, responses):
        self.responses = responses

    def complete(self, requests):
        assert len(requests) == len(self.responses)
        return list(self.responses)

    def describe(self):
        return "fake endpoint"
