"""The `rl` section: reinforcement fine-tuning of a trained run with metric rewards (docs/model.md,
"Reinforcement fine-tuning"), and the per-run `rl` entry of `train.runs` that names the run it
starts from. A run's RL settings are this section deep-merged with the run's own `rl` keys."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, SettingsError, build, doc
from srrg.settings.metrics import METRIC_OPTIONS
from srrg.settings.model import RL_FROM as FROM
from srrg.settings.model import TrainerConfig, deep_merge

DEFAULT_CHECKPOINTS = "checkpoints"  # the workflow puts them under cache_dir instead


@dataclass(frozen=True)
class RewardTerm(Settings):
    """One metric of the reward: its per-report value (the same code as `srrg score`) times weight."""

    metric: str = field(
        default="s_score", metadata=doc("A registered metric (docs/metrics.md).", enum=sorted(METRIC_OPTIONS))
    )
    key: str | None = field(
        default=None,
        metadata=doc("The metric's per-report column that is the reward (e.g. bleu_4); null = the metric's name."),
    )
    weight: float = field(default=1.0, metadata=doc("Weight of this term in the reward (a weighted sum)."))
    options: dict[str, Any] = field(
        default_factory=dict,
        metadata=doc("The metric's options, as under score.options.<metric> (a judge's llm settings included)."),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        options_class = METRIC_OPTIONS[self.metric]
        if options_class is None:
            if self.options:
                raise SettingsError("options", f"metric {self.metric} takes no options")
        else:
            build(options_class, self.options, "options")


@dataclass(frozen=True)
class RLConfig(Settings):
    """Policy-gradient fine-tuning of a trained model towards a metric (docs/model.md): for each
    study `group_size` reports are sampled, scored against the reference, and their log-likelihood
    is raised in proportion to their advantage, with a KL penalty towards the starting model."""

    reward: tuple[RewardTerm, ...] = field(
        default=(RewardTerm(),),
        metadata=doc("The reward: a weighted sum of per-report metric values (default: S-Score).", minItems=1),
    )
    group_size: int = field(default=4, metadata=doc("Reports sampled per study and step (G).", minimum=2))
    sampler: Literal["sample", "beam"] = field(
        default="sample",
        metadata=doc(
            "How a study's G reports are drawn: sample (random sampling with temperature and top_p) or beam (the G "
            "best beams of a G-wide beam search, the decoder inference uses; temperature and top_p unused)."
        ),
    )
    baseline: Literal["group", "greedy"] = field(
        default="group",
        metadata=doc(
            "What a sample's reward is compared with: group (the mean reward of the study's G samples, GRPO) or "
            "greedy (the reward of the study's greedy decode, self-critical training)."
        ),
    )
    scale_by_std: bool = field(
        default=False, metadata=doc("Divide each advantage by the standard deviation of its group's rewards (GRPO).")
    )
    kl_coef: float = field(
        default=0.05,
        metadata=doc("Weight of the per-token KL estimate towards the starting (frozen) model; 0 = none.", minimum=0),
    )
    ce_weight: float = field(
        default=0.0,
        metadata=doc(
            "Share w of the supervised cross-entropy on the reference reports in the loss, (1 - w) RL + w CE "
            "(mixed objective); 0 = RL only.",
            minimum=0,
            maximum=1,
        ),
    )
    temperature: float = field(default=1.0, metadata=doc("Sampling temperature.", exclusiveMinimum=0))
    top_p: float = field(
        default=1.0,
        metadata=doc("Nucleus sampling: the smallest token set of this mass.", exclusiveMinimum=0, maximum=1),
    )
    max_new_tokens: int | None = field(
        default=None,
        metadata=doc("Tokens sampled per report; null = the model's max_target_tokens.", minimum=1),
    )
    lr: float = field(default=1.0e-5, metadata=doc("AdamW learning rate (constant).", exclusiveMinimum=0))
    weight_decay: float = field(default=0.0, metadata=doc("AdamW weight decay.", minimum=0))
    batch_size: int = field(default=8, metadata=doc("Studies per step (each sampled group_size times).", minimum=1))
    max_studies: int | None = field(
        default=None, metadata=doc("First N training studies sampled from; null = all.", minimum=1)
    )
    tune_encoder: bool = field(
        default=False, metadata=doc("Update the image encoder too (false: projector and decoder side only).")
    )
    trainer: TrainerConfig = field(
        default_factory=lambda: TrainerConfig(max_steps=50, log_every_n_steps=5),
        metadata=doc("The Lightning trainer (max_steps = RL steps; seed, devices, checkpoints as for train)."),
    )
    checkpoint_dir: str = field(
        default=DEFAULT_CHECKPOINTS,
        metadata=doc(
            "Folder of the checkpoints (<run>/<fingerprint>), outside the workflow's outputs; the workflow reads the "
            "default as <cache_dir>/checkpoints."
        ),
    )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rl_base(spec_rl: Mapping[str, Any] | None) -> str | None:
    """The run an RL run starts from (its `rl.from`), None for a supervised run."""
    return None if spec_rl is None else spec_rl.get(FROM)


def rl_slice(cfg: Mapping[str, Any], spec_rl: Mapping[str, Any]) -> dict[str, Any]:
    """One RL run's settings: the `rl` section deep-merged with the run's `rl` keys (less `from`)."""
    return deep_merge(cfg.get("rl") or {}, {k: v for k, v in spec_rl.items() if k != FROM})


def workflow_rl_settings(cfg: Mapping[str, Any], spec_rl: Mapping[str, Any]) -> dict[str, Any]:
    """rl_slice as rule `rl` passes it: checkpoints under <cache_dir>/checkpoints unless
    checkpoint_dir names another folder than its default (as for train)."""
    out = rl_slice(cfg, spec_rl)
    if out.get("checkpoint_dir", DEFAULT_CHECKPOINTS) == DEFAULT_CHECKPOINTS:
        out["checkpoint_dir"] = f"{cfg.get('cache_dir', '.cache/srrg')}/checkpoints"
    return out
