"""Per-stage accounting of LLM use: requests asked, served from cache, sent, failed, tokens, cost.

The warm-rerun promise ("a rerun sends zero requests") is checked against these counters, and the
cost estimate uses prices from the config (zero when none are configured, never a built-in price).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Usage:
    """Counters for one purpose (stage). `sent` counts distinct requests handed to a backend;
    `attempts` counts HTTP calls including retries; `truncated` counts answers cut off by max_tokens;
    `reused_prompt_tokens`: of prompt_tokens, those the server says came from its prompt cache."""

    requests: int = 0
    cache_hits: int = 0
    sent: int = 0
    attempts: int = 0
    errors: int = 0
    truncated: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    reused_prompt_tokens: int = 0


class UsageLedger:
    """Usage per purpose, with prices per million input/output tokens (LLMConfig's)."""

    def __init__(self, price_input_per_1m: float, price_output_per_1m: float) -> None:
        self.price_in = price_input_per_1m
        self.price_out = price_output_per_1m
        self.by_purpose: dict[str, Usage] = {}

    def of(self, purpose: str) -> Usage:
        return self.by_purpose.setdefault(purpose, Usage())

    def record_tokens(self, purpose: str, prompt_tokens: int, completion_tokens: int, reused: int = 0) -> None:
        u = self.of(purpose)
        u.reused_prompt_tokens += reused
        u.prompt_tokens += prompt_tokens
        u.completion_tokens += completion_tokens
        u.cost_usd += (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6

    def total(self) -> Usage:
        out = Usage()
        for u in self.by_purpose.values():
            for name, value in asdict(u).items():
                setattr(out, name, getattr(out, name) + value)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"total": asdict(self.total()), "by_purpose": {k: asdict(v) for k, v in sorted(self.by_purpose.items())}}
