"""Dataset over the Parquet shards (docs/workflow.md) and the LightningDataModule."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import polars as pl
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.image_cache import ImageCache, find_cache
from srrg.io import list_files
from srrg.model.context import context_text, view_inputs
from srrg.model.images import log_image_source, resolve_images, study_image
from srrg.report import StructuredReport, from_obj, render_sentences
from srrg.settings.model import ContextConfig, DataConfig
from srrg.shards import split_files
from srrg.srrg_text import render_srrg

log = logging.getLogger(__name__)
MAX_AUTO_WORKERS = 8  # beyond this the loader outruns one GPU on cached images (docs/model.md)


def worker_count(setting: int | None) -> int:
    """DataLoader workers: the setting, or when null the job's CPUs less the main process, at most
    MAX_AUTO_WORKERS. The job's CPUs are SLURM_CPUS_PER_TASK on SLURM, else the threads Snakemake
    gave the job (it exports OMP_NUM_THREADS), else one: 0 workers on the local profile and
    outside the workflow, cpus_per_task - 1 on the SLURM profile."""
    if setting is not None:
        return setting
    for var in ("SLURM_CPUS_PER_TASK", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            return min(int(value) - 1, MAX_AUTO_WORKERS)
    return 0


def open_cache(dataset_dir: str | Path, splits: Sequence[str], size: int) -> ImageCache | None:
    """The image cache of a dataset's splits for input size `size` when the dataset folder holds
    one (srrg.image_cache.find_cache), checked against the manifest; None when it holds none."""
    cache_dir = find_cache(dataset_dir, size)
    if cache_dir is None:
        return None
    rels = [p.relative_to(dataset_dir).as_posix() for s in splits for p in split_files(dataset_dir, s)]
    cache = ImageCache(cache_dir, dataset_dir, rels)
    log.info("images: read from the image cache %s (%d images, %d px)", cache_dir, len(cache), cache.size)
    return cache


def view_mask(df: pl.DataFrame, views: Sequence[str] | None) -> pl.Series:
    """True for rows whose view is allowed (all rows when no filter is set)."""
    if views is None:
        return pl.Series([True] * df.height, dtype=pl.Boolean)
    return df["view"].is_in(list(views)).fill_null(False)


def select_rows(df: pl.DataFrame, views: Sequence[str] | None, limit: int | None) -> pl.DataFrame:
    kept = df.filter(view_mask(df, views))
    return kept if limit is None else kept.head(limit)


def image_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per recorded image of a study (docs/model.md): image_paths narrowed to that image,
    `view` the image's own view (image_views, when the dataset records it), `image_index` its place
    in the study's image_paths. A study without image paths stays one row, without image_index
    (phantoms and placeholders are drawn per study)."""
    paths = list(row.get("image_paths") or [])
    if not paths:
        return [row]
    image_views = list(row.get("image_views") or [row.get("view")] * len(paths))
    return [
        {**row, "image_paths": [path], "image_views": [view], "view": view, "image_index": k}
        for k, (path, view) in enumerate(zip(paths, image_views, strict=True))
    ]


def image_samples(rows: list[dict[str, Any]], views: Sequence[str] | None) -> list[dict[str, Any]]:
    """`data.samples: image` (docs/model.md): one sample per image of each study (image_rows). With
    a view filter, images of other views are dropped (a study's lateral beside its PA); a study
    without image paths stays one sample (the study filter, select_rows, ran before)."""
    return [
        image
        for row in rows
        for image in image_rows(row)
        if views is None or "image_index" not in image or image["view"] in views
    ]


def dataset_report(structured: str | None) -> StructuredReport:
    """A dataset row's report, already canonical (the extract stage made it): decoded, not re-canonicalized."""
    try:
        return from_obj(json.loads(structured or ""))[0]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"dataset row has no valid structured report: {structured!r:.80}") from exc


def report_target(report: StructuredReport, sentences: str | None, target: str) -> str:
    """The training target of a decoded report: compact MIMIC-STRUC JSON, the SRRG organ-header
    text (srrg.srrg_text, docs/inputs.md), or the sentence rendering of docs/report.md."""
    if target == "json":
        return report.to_json()
    if target == "srrg":
        return render_srrg(report)
    return sentences if sentences else render_sentences(report)


def target_text(structured: str | None, sentences: str | None, target: str) -> str:
    return report_target(dataset_report(structured), sentences, target)


def reference_text(row: dict[str, Any], target: str) -> str:
    return target_text(row.get("structured"), row.get("sentences"), target)


def positive_names(report: StructuredReport) -> list[str]:
    """The names of a report's positive findings (the labels of the finding loss, whatever the
    training target is)."""
    return [f.name for f in report.positive]


def study_contexts(
    rows: Sequence[dict[str, Any]], split: pl.DataFrame, cfg: ContextConfig, target: str
) -> tuple[list[str] | None, dict[str, int]]:
    """Each sample's context text (context_text; None when every text switch is off) and its
    counts. The prior report is the prior study's reference in the run's target format
    (reference_text: the text the model learns to write, so a comparison reads like its own
    output), found by `prior_study_id` among the rows of the same split (`split`, before any view
    filter or limit; ingest links priors within a split). A study without a link (first, undated,
    or a dataset without the column) reads "none" (`prior_none`); a link to a study not in the
    split reads "none" too and is counted apart (`prior_missing`) and logged as a warning."""
    if not (cfg.indication or cfg.prior_report):
        return None, {}
    links = [row.get("prior_study_id") if cfg.prior_report else None for row in rows]
    wanted = sorted({link for link in links if link})
    found = split.filter(pl.col("study_id").is_in(wanted)).to_dicts() if wanted else []
    priors = {row["study_id"]: reference_text(row, target) for row in found}
    counts = dict.fromkeys(["samples", *(["indication_none"] if cfg.indication else [])], 0)
    if cfg.prior_report:
        counts.update(prior=0, prior_none=0, prior_missing=0)
    texts = []
    for row, link in zip(rows, links, strict=True):
        prior = priors.get(link) if link else None
        texts.append(context_text(cfg, row, prior))
        counts["samples"] += 1
        if cfg.indication and not (row.get("indication") or "").strip():
            counts["indication_none"] += 1
        if cfg.prior_report:
            counts["prior" if prior else "prior_missing" if link else "prior_none"] += 1
    log.info("study context (model.context): %s", counts)
    if counts.get("prior_missing"):
        log.warning(
            "study context: %d of %d samples link a prior study that is not in the split; they read "
            "'Prior report: none'",
            counts["prior_missing"],
            counts["samples"],
        )
    return texts, counts


class ReportDataset(Dataset):
    """One item per sample (a study, or one image of it: image_samples): the normalized image
    tensor (under a resolved image mode; real images from the image cache when given one) and the
    target text."""

    def __init__(
        self,
        rows: list[dict[str, Any]],
        target: str,
        images: str,
        image_root: str | None,
        image_size: int,
        cache: ImageCache | None = None,
        views: int | None = None,
        contexts: Sequence[str] | None = None,
    ) -> None:
        """views > 1 (None = one image): each item holds up to that many images of its study and their
        presence (model.context.views, srrg.model.context.view_inputs). contexts: each row's context
        text (study_contexts), carried by its item; None when the model reads none."""
        self.rows, self.target, self.images, self.image_root, self.image_size, self.cache = (
            rows,
            target,
            images,
            image_root,
            image_size,
            cache,
        )
        self.views = views
        self.contexts = contexts

    def __len__(self) -> int:
        return len(self.rows)

    def targets(self) -> list[str]:
        return [reference_text(row, self.target) for row in self.rows]

    def positives(self) -> list[list[str]]:
        """Each study's positive finding names (the labels of the auxiliary finding loss)."""
        return [positive_names(dataset_report(row.get("structured"))) for row in self.rows]

    def __getitem__(self, i: int) -> dict[str, Any]:
        """The row's report is decoded once for both the target and the finding labels."""
        row = self.rows[i]
        present = None
        if self.views is not None and self.views > 1:
            image, present = view_inputs(row, self.images, self.image_root, self.image_size, self.cache, self.views)
        else:
            image = study_image(row, self.images, self.image_root, self.image_size, self.cache)
        report = dataset_report(row.get("structured"))
        item = {
            "study_id": row["study_id"],
            "image": image,
            "target": report_target(report, row.get("sentences"), self.target),
            "positives": positive_names(report),
        }
        if self.contexts is not None:  # model.context's text switches
            item["context"] = self.contexts[i]
        return item if present is None else {**item, "present": present}


def collate(items: list[dict[str, Any]]) -> dict[str, Any]:
    batch = {
        "study_ids": [it["study_id"] for it in items],
        "images": torch.stack([it["image"] for it in items]),
        "targets": [it["target"] for it in items],
        "positives": [it["positives"] for it in items],
    }
    if "present" in items[0]:  # several views per study (model.context.views)
        batch["present"] = torch.stack([it["present"] for it in items])
    if "context" in items[0]:  # each study's context text (model.context indication / prior_report)
        batch["contexts"] = [it["context"] for it in items]
    return batch


class SkippingSampler(DistributedSampler):
    """The seeded per-epoch order of DistributedSampler (one replica without DDP), minus the first
    `skip` indices once: what a restored run has already trained on in this epoch."""

    skip = 0

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())
        start, self.skip = self.skip, 0
        return iter(indices[start:])


class ResumableLoader(DataLoader):
    """A DataLoader that Lightning checkpoints (its state_dict / load_state_dict interface): the
    state is the number of batches of the current epoch already trained, read from the trainer's
    progress (not from the loader, which prefetches ahead), so a run resumed mid-epoch sees exactly
    the batches an uninterrupted run would."""

    def __init__(self, *args: Any, progress: Callable[[], int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.progress = progress

    def state_dict(self) -> dict[str, int]:
        return {"batches_done": int(self.progress())}

    def load_state_dict(self, state: dict[str, int]) -> None:
        done = int(state.get("batches_done", 0))
        assert isinstance(self.sampler, SkippingSampler)
        # a checkpoint taken on an epoch's last batch resumes at the start of the next epoch
        self.sampler.skip = 0 if done >= len(self) else done * int(self.batch_size or 1)


class ReportDataModule(L.LightningDataModule):
    def __init__(
        self,
        dataset_dir: str | Path,
        cfg: DataConfig,
        target: str,
        image_size: int,
        seed: int,
        views: int | None = None,
        context: ContextConfig | None = None,
    ) -> None:
        """context: the model's text switches (model.context; None = off): each item then carries
        its study's context text (study_contexts), counted in context_counts by split."""
        super().__init__()
        self.dataset_dir, self.cfg, self.target, self.image_size, self.seed = dataset_dir, cfg, target, image_size, seed
        self.views = views  # images per study (model.context.views; None = one)
        self.train_set: ReportDataset | None = None
        self.val_set: ReportDataset | None = None
        self.images: str | None = None  # the resolved image mode (real, phantom, placeholder)
        self.train_studies = 0
        self.context = context or ContextConfig()
        self.context_counts: dict[str, dict[str, int]] = {}  # split -> study_contexts' counts

    def _rows(self, split: str, limit: int | None) -> tuple[list[dict[str, Any]], list[str] | None]:
        """The split's studies after the view filter and the limit (`limit` counts studies), then
        one row per training sample (data.samples), and each sample's context text (study_contexts)."""
        frame = read_split(self.dataset_dir, split)
        rows = select_rows(frame, self.cfg.views, limit).to_dicts()
        if split == "train":
            self.train_studies = len(rows)
        samples = image_samples(rows, self.cfg.views) if self.cfg.samples == "image" else rows
        contexts, counts = study_contexts(samples, frame, self.context, self.target)
        if counts:
            self.context_counts[split] = counts
        return samples, contexts

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is not None:
            return  # already set up (run_train reads the training targets before fitting)
        train, train_contexts = self._rows("train", self.cfg.max_train_studies)
        if not train:
            raise UserError(f"no training studies in {self.dataset_dir}/train after the view filter {self.cfg.views}")
        self.images = resolve_images(self.cfg.images, self.cfg.image_root, (r.get("image_paths") for r in train))
        log_image_source(self.images, self.cfg.image_root)
        val_dir = Path(self.dataset_dir) / "validate"
        validate = bool(list_files(val_dir, suffix=".parquet"))
        splits = ["train", "validate"] if validate else ["train"]
        cache = open_cache(self.dataset_dir, splits, self.image_size) if self.images == "real" else None
        args = (self.target, self.images, self.cfg.image_root, self.image_size, cache, self.views)
        self.train_set = ReportDataset(train, *args, train_contexts)
        if validate:
            val, val_contexts = self._rows("validate", self.cfg.max_val_studies)
            self.val_set = ReportDataset(val, *args, val_contexts)

    def _sampler(self, ds: ReportDataset, shuffle: bool) -> SkippingSampler:
        """Seeded per epoch (Lightning calls set_epoch), sharded over the DDP ranks."""
        world = self.trainer.world_size if self.trainer else 1
        rank = self.trainer.global_rank if self.trainer else 0
        return SkippingSampler(ds, num_replicas=world, rank=rank, shuffle=shuffle, seed=self.seed)

    def _generator(self) -> torch.Generator:
        """Each DataLoader iterator draws a base seed; from its own generator it leaves the global
        RNG (dropout, drop-path) untouched, so restored RNG states stay in step."""
        return torch.Generator().manual_seed(self.seed)

    def _trained_batches(self) -> int:
        return self.trainer.fit_loop.epoch_loop.batch_progress.current.processed if self.trainer else 0

    def train_dataloader(self) -> ResumableLoader:
        assert self.train_set is not None
        return ResumableLoader(
            self.train_set,
            batch_size=self.cfg.batch_size,
            sampler=self._sampler(self.train_set, True),
            num_workers=worker_count(self.cfg.num_workers),
            collate_fn=collate,
            persistent_workers=worker_count(self.cfg.num_workers) > 0,
            progress=self._trained_batches,
            generator=self._generator(),
        )

    def val_dataloader(self) -> list[DataLoader]:
        if self.val_set is None or not len(self.val_set):
            return []
        sampler = self._sampler(self.val_set, False)
        return [
            DataLoader(
                self.val_set,
                batch_size=self.cfg.batch_size,
                sampler=sampler,
                num_workers=worker_count(self.cfg.num_workers),
                collate_fn=collate,
                generator=self._generator(),
            )
        ]
