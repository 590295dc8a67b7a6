"""The model file that `srrg train` writes and `srrg infer` reads (docs/model.md): one torch file
holding the model config, the trained (non-reloadable) weights, the word vocabulary and finding
labels when the run has them, the resolved data config and the training summary. The frozen LLM is
not in it: loading rebuilds the network from the config and reloads the LLM from its source.

Model files are what users share, so loading runs no code: the file holds only tensors,
containers, strings and numbers (the configs as plain dicts, rebuilt into their classes here) and is
read with torch's safe unpickler; a file that needs more is refused (docs/model.md, "Safety and
identity")."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from srrg.config import from_dict
from srrg.errors import UserError, one_line
from srrg.io import atomic_path, list_files
from srrg.model.network import ReportGenerator
from srrg.settings.model import DataConfig, ModelConfig
from srrg.settings.splits import SPLITS
from srrg.shards import MANIFEST_NAME, file_sha256

REQUIRED = ("model_config", "state_dict", "data_config")


def dataset_digest(dataset_dir: str | Path) -> str:
    """The identity of a dataset folder (docs/model.md, "Safety and identity"): the SHA-256 of its
    manifest.json, which records every shard's rows and SHA-256; a folder without one (shards
    written by hand) hashes its shards' names and bytes. A checkpoint and an inference part are
    keyed by it, so another dataset's state is never taken for this one's."""
    root = Path(dataset_dir)
    if (root / MANIFEST_NAME).is_file():
        return file_sha256(root / MANIFEST_NAME)
    digest = hashlib.sha256()
    for split in SPLITS:
        for path in list_files(root / split, suffix=".parquet"):
            digest.update(f"{split}/{path.name}\0{file_sha256(path)}\0".encode())
    return digest.hexdigest()


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


def read_blob(path: str | Path) -> dict[str, Any]:
    """The model file's dict, read with the safe unpickler (weights_only: tensors, containers,
    strings and numbers; no object's code runs). A file that needs more, or is no model file
    (truncated, another format, lacking a required entry), is a UserError naming it on one line."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - the safe unpickler fails on garbage with any error type
        if isinstance(exc, pickle.UnpicklingError) and "weights only" in str(exc).lower():
            raise UserError(
                f"model file {path} holds objects other than tensors, containers, strings and numbers, which "
                "would run code when loaded: refused (load only model files written by srrg train)"
            ) from None
        raise UserError(
            f"cannot read model file {path}: {first_line(exc)} (expected a file written by srrg train)"
        ) from None
    missing = [k for k in REQUIRED if not isinstance(blob, dict) or k not in blob]
    if missing:
        raise UserError(f"model file {path} lacks {', '.join(missing)} (expected a file written by srrg train)")
    return blob


def first_line(exc: BaseException) -> str:
    """An exception's first line, cut to 200 characters (torch's can run to kilobytes)."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def load_model(path: str | Path, device: torch.device) -> tuple[ReportGenerator, DataConfig]:
    """Rebuild the network from a model file (the frozen LLM is reloaded from its source). A file
    that is not one (truncated, another format, unsafe) or whose weights do not fit its model
    config (another config's, none at all) is a UserError naming it, not a traceback."""
    blob = read_blob(path)
    try:
        net = ReportGenerator(
            from_dict(ModelConfig, blob["model_config"], "model"),
            vocab=blob.get("vocab"),
            findings=blob.get("findings"),
        )
        net.load_exported(blob["state_dict"])
        data_config = from_dict(DataConfig, blob["data_config"], "data")
    except UserError as exc:
        raise UserError(f"model file {path}: {one_line(exc)}") from None
    except (ValueError, RuntimeError, TypeError, AttributeError, KeyError) as exc:
        raise UserError(
            f"model file {path}: its weights do not fit its model config ({first_line(exc)}); "
            "expected a file written by srrg train"
        ) from None
    return net.to(device).eval(), data_config
