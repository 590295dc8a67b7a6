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
    """Raw location phrases -> clinician-friendly phrases (srrg normalize), by rules or through the
    `llm` client."""

    method: Literal["rules", "llm"] = field(
        default="rules",
        metadata=doc(
            "rules = deterministic, offline; llm = each unique phrase through the llm section (an invalid answer "
            "keeps the rules phrase)."
        ),
    )
    allow_fallback: bool = field(
        default=False,
        metadata=doc(
            "With method llm: a failed LLM request keeps the rules phrase (exit 0) instead of failing the stage "
            "(exit 1); the summary says how many phrases fell back."
        ),
    )
    max_words: int = field(default=12, metadata=doc("Longest accepted LLM answer (words).", minimum=1))
    max_tokens: int = field(default=24, metadata=doc("Decoding budget per phrase.", minimum=1))
    llm: LLMConfig = field(
        default_factory=LLMConfig, metadata=doc("The top-level llm section, passed in by the workflow rule.")
    )

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
