"""The `normalize` section: raw location phrases -> clinician-friendly phrases (srrg normalize;
docs/workflow.md), by rules or through the `llm` section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, SettingsError, build, doc
from srrg.settings.llm import LLMConfig


@dataclass(frozen=True)
class NormalizeConfig(Settings):
    """method: rules (deterministic, offline default) | llm (through the `llm` client; an invalid answer
    keeps the rules phrase). max_words: longest accepted LLM answer; max_tokens: decoding budget per
    phrase; allow_fallback: keep the rules phrase for phrases whose LLM request failed instead of
    failing the stage (the dataset is then partly rules-normalized, and the summary says how much)."""

    method: Literal["rules", "llm"] = field(
        default="rules",
        metadata=doc(
            "rules = deterministic, offline; llm = each unique phrase through the llm section, rules as fallback."
        ),
    )
    allow_fallback: bool = field(
        default=False,
        metadata=doc(
            "With method llm: a failed LLM request keeps the rules phrase (exit 0) "
            "instead of failing the stage (exit 1)."
        ),
    )
    max_words: int = field(default=12, metadata=doc("Longest accepted LLM answer (words).", minimum=1))
    max_tokens: int = field(default=24, metadata=doc("Decoding budget per phrase.", minimum=1))
    llm: LLMConfig = field(default_factory=LLMConfig)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method == "llm" and self.llm.backend == "rules":
            raise SettingsError(
                "method", "llm needs an LLM: set llm.backend to openai or local (or normalize.method: rules)"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> NormalizeConfig:
        """The normalize slice; its `llm` key holds the llm slice (the rule passes both)."""
        data = dict(data or {})
        llm = LLMConfig.from_dict(data.pop("llm", None))  # refuses inline secrets too
        return build(cls, {**data, "llm": llm}, "normalize")
