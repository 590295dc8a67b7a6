"""The model file that `srrg train` writes and `srrg infer` reads (docs/model.md): one torch file
holding the model config, the trained (non-reloadable) weights, the word vocabulary and finding
labels when the run has them, the resolved data config and the training summary. The frozen LLM is
not in it: loading rebuilds the network from the config and reloads the LLM from its source."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.io import atomic_path
from srrg.model.network import ReportGenerator
from srrg.settings.model import DataConfig, ModelConfig

REQUIRED = ("model_config", "state_dict", "data_config")


def save_model(
    path: str | Path, net: ReportGenerator, data_config: Mapping[str, Any], summary: Mapping[str, Any]
) -> None:
    """Write the model file atomically (a killed job leaves no half-written file)."""
    blob = {
        "model_config": asdict(net.cfg),
        "vocab": net.vocab,
        "findings": net.findings,
        "state_dict": net.export_state_dict(),
        "data_config": dict(data_config),
        "summary": dict(summary),
    }
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


def load_model(path: str | Path, device: torch.device) -> tuple[ReportGenerator, DataConfig]:
    """Rebuild the network from a model file (the frozen LLM is reloaded from its source). A file
    that is not one (truncated, another format) is a UserError naming it, not a traceback."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=False)
    except (pickle.UnpicklingError, EOFError, ValueError, RuntimeError, AttributeError, ImportError) as exc:
        raise UserError(f"cannot read model file {path}: {exc} (expected a file written by srrg train)") from exc
    missing = [k for k in REQUIRED if not isinstance(blob, dict) or k not in blob]
    if missing:
        raise UserError(f"model file {path} lacks {', '.join(missing)} (expected a file written by srrg train)")
    net = ReportGenerator(
        from_dict(ModelConfig, blob["model_config"], "model"), vocab=blob.get("vocab"), findings=blob.get("findings")
    )
    net.load_exported(blob["state_dict"])
    return net.to(device).eval(), from_dict(DataConfig, blob["data_config"], "data")
