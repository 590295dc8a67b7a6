"""MIMIC-CXR in its published file layout -> one record per study (docs/workflow.md).

Reads the free-text reports (`files/pXX/pXXXXXXXX/sXXXXXXXX.txt` in a folder or in the official
zip), the official split and metadata CSVs, and the MIMIC-CXR-JPG image tree. Every study named by
any of these sources becomes a record, so a study with a missing report or missing images is
reported, not dropped. FINDINGS / IMPRESSION, and the context sections (INDICATION, TECHNIQUE,
COMPARISON), are cut from the free text by the section splitter that extraction uses
(srrg.text.sections, header spellings in srrg/vocab/sections.yaml). The metadata's StudyDate and
StudyTime give each study its date and time (the earliest of its images), which orders a
patient's studies (srrg.ingest links each to its prior).
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl

from srrg.errors import UserError
from srrg.io import list_files, read_csv
from srrg.progress import tracked
from srrg.settings.ingest import MimicConfig
from srrg.sources.common import OK, context_columns, image_status, report_status
from srrg.text.sections import split_sections

# file name inside the reports tree: .../pXX/pXXXXXXXX/sXXXXXXXX.txt
_REPORT_NAME = re.compile(r"(?:^|/)p\d{2}/p(\d+)/s(\d+)\.txt$")
_WS = re.compile(r"\s+")
_CHUNK = 5000  # texts per task of split_while_reading's workers

# the sections ingest keeps, in the order of MimicStudy.sections
SECTION_NAMES = ("findings", "impression", "indication", "technique", "comparison")

# frontal views first: a model that reads one image should read the frontal one
VIEW_ORDER = {"PA": 0, "AP": 1, "AP AXIAL": 2, "PA LLD": 3, "AP LLD": 3, "LATERAL": 4, "LL": 5}


@dataclass(frozen=True)
class MimicStudy:
    """One study as the files describe it; `text` is None when no report file exists."""

    study_id: str
    subject_id: str
    split: str | None
    dicom_ids: tuple[str, ...]
    views: tuple[str | None, ...]
    text: str | None
    sections: tuple[str | None, ...] | None = None  # SECTION_NAMES' texts when read_studies split them
    study_datetime: datetime | None = None  # the earliest StudyDate/StudyTime of its images


def section_texts(text: str) -> tuple[str | None, ...]:
    """The SECTION_NAMES texts of a free-text report, whitespace collapsed (MIMIC wraps lines
    mid-sentence); None when the section is absent or empty. A section written twice is joined."""
    found: dict[str, list[str]] = {name: [] for name in SECTION_NAMES}
    for section in split_sections(text):
        if section.name not in found:
            continue  # the preamble, recommendation, ...: not collapsed, as they are not kept
        body = _WS.sub(" ", section.text).strip()
        if body:
            found[section.name].append(body)
    return tuple(" ".join(found[name]) or None for name in SECTION_NAMES)


def findings_impression(text: str) -> tuple[str | None, str | None]:
    """The FINDINGS and IMPRESSION texts of a free-text report (section_texts' first two)."""
    findings, impression, *_ = section_texts(text)
    return findings, impression


def sections_of(texts: list[str | None]) -> list[tuple[str | None, ...]]:
    """section_texts of every text in order (all None for a missing report); the work of one chunk
    of split_while_reading, here or in a worker process."""
    return [section_texts(t) if t is not None else (None,) * len(SECTION_NAMES) for t in texts]


def split_while_reading(
    reports: Iterable[tuple[str, str, bytes]], n_process: int
) -> Iterator[tuple[str, str, str, tuple[str | None, ...]]]:
    """(subject, study, text, (findings, impression)) of every report, in order. With n_process > 1,
    once a first chunk of _CHUNK reports is read (and split here while they start) n_process worker
    processes split each further chunk while the next ones are read: unzipping or reading the files
    overlaps the splitting. A collection smaller than a chunk starts no worker."""
    chunk: list[tuple[str, str, str]] = []
    pending: deque[tuple[list[tuple[str, str, str]], Future[list[tuple[str | None, ...]]]]] = deque()
    with ExitStack() as stack:
        pool: ProcessPoolExecutor | None = None
        for subject, study, raw in reports:
            chunk.append((subject, study, decode_report(raw)))
            if len(chunk) < _CHUNK or n_process <= 1:
                continue
            if pool is None:
                pending.append((chunk, _done(sections_of([t for _, _, t in chunk]))))  # the first: here
                pool = stack.enter_context(ProcessPoolExecutor(n_process, mp_context=get_context("spawn")))
            else:
                pending.append((chunk, pool.submit(sections_of, [t for _, _, t in chunk])))
            chunk = []
            while pending and pending[0][1].done():
                yield from _paired(*pending.popleft())
        if chunk:
            pending.append((chunk, _done(sections_of([t for _, _, t in chunk]))))
        while pending:
            yield from _paired(*pending.popleft())


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _paired(
    chunk: list[tuple[str, str, str]], future: Future[list[tuple[str | None, ...]]]
) -> Iterator[tuple[str, str, str, tuple[str | None, ...]]]:
    for (subject, study, text), pair in zip(chunk, future.result()):
        yield subject, study, text, pair


def decode_report(raw: bytes) -> str:
    """Reports are UTF-8; a stray invalid byte must not stop ingest, so it becomes U+FFFD."""
    return raw.decode("utf-8", errors="replace")


# a zip member's local header (PKWARE APPNOTE 4.3.7): signature, version, flags, method, time,
# date, CRC-32, sizes, then the lengths of the name and the extra field that precede the data
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _member_bytes(zf: zipfile.ZipFile, fh: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes. Stored and deflated members (the official zip's) are read straight from
    the local header with their CRC-32 checked, which costs half of ZipFile.read per member (a
    quarter of a million reports); encrypted or otherwise compressed ones go through ZipFile.read."""
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return zf.read(info)
    fh.seek(info.header_offset)
    signature, *_, name_len, extra_len = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local file header of {info.filename!r}")
    fh.seek(name_len + extra_len, 1)
    data = fh.read(info.compress_size)
    if info.compress_type == zipfile.ZIP_DEFLATED:
        data = zlib.decompress(data, -15)
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"bad CRC-32 for file {info.filename!r}")
    return data


def iter_report_files(reports: str | Path) -> Iterator[tuple[str, str, bytes]]:
    """(subject_id, study_id, raw bytes) for every report in a reports folder or the official zip."""
    path = Path(reports)
    if not path.exists():
        raise FileNotFoundError(f"MIMIC-CXR reports not found at {path} (set ingest.mimic_cxr.reports)")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise UserError(f"{path}: expected the mimic-cxr-reports folder or its .zip")
        try:  # read as the caller iterates: a damaged member fails here, mid-way
            with zipfile.ZipFile(path) as zf, path.open("rb") as fh:
                for info in zf.infolist():
                    m = _REPORT_NAME.search(info.filename)
                    if m:
                        yield m.group(1), m.group(2), _member_bytes(zf, fh, info)
        except (zipfile.BadZipFile, zlib.error, EOFError, struct.error) as err:
            raise UserError(f"{path}: the zip is truncated or damaged ({err}); download it again") from None
        return
    for file in list_files(path, suffix=".txt", prefix="s", recursive=True):
        m = _REPORT_NAME.search(file.relative_to(path).as_posix())
        if m:
            yield m.group(1), m.group(2), file.read_bytes()


def _read_ids_csv(path: str | Path, columns: Mapping[str, str]) -> pl.DataFrame:
    """Read the given columns of an official CSV (plain or .gz) as strings, renamed."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"MIMIC-CXR file not found: {p}")
    try:
        header = read_csv(p, n_rows=0).columns
        missing = [c for c in columns if c not in header]
        if missing:
            raise UserError(
                f"{p}: missing column(s) {missing}; found {header[:12]} (is this the published MIMIC-CXR file?)"
            )
        df = read_csv(p, columns=list(columns), schema_overrides={c: pl.Utf8 for c in columns})
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"{p}: not a readable CSV ({first})") from None
    return df.rename(dict(columns))


def read_split(path: str | Path) -> pl.DataFrame:
    """mimic-cxr-2.0.0-split.csv(.gz): dicom_id, study_id, subject_id, split."""
    return _read_ids_csv(
        path, {"dicom_id": "dicom_id", "study_id": "study_id", "subject_id": "subject_id", "split": "split"}
    )


def read_metadata(path: str | Path) -> pl.DataFrame:
    """mimic-cxr-2.0.0-metadata.csv(.gz): dicom_id, study_id, subject_id, view, study_date, study_time."""
    columns = {"dicom_id": "dicom_id", "study_id": "study_id", "subject_id": "subject_id", "ViewPosition": "view"}
    return _read_ids_csv(path, {**columns, "StudyDate": "study_date", "StudyTime": "study_time"})


def study_datetime(date: str | None, time: str | None) -> datetime | None:
    """StudyDate (YYYYMMDD) and StudyTime (HHMMSS.ffffff, leading zeros of the hour dropped in the
    published CSV: "80556.875" is 08:05:56.875) as a datetime; None when either is missing or not
    a valid date and time (such a study is not ordered among its patient's)."""
    if not date or not time:
        return None
    try:
        whole, _, fraction = time.strip().partition(".")
        hhmmss = int(whole)
        micro = int((fraction + "000000")[:6]) if fraction else 0
        return datetime.strptime(date.strip(), "%Y%m%d").replace(
            hour=hhmmss // 10000, minute=hhmmss // 100 % 100, second=hhmmss % 100, microsecond=micro
        )
    except ValueError:
        return None


def image_relpath(subject_id: str, study_id: str, dicom_id: str) -> str:
    """Path of an image inside the MIMIC-CXR-JPG tree."""
    return f"files/p{subject_id[:2]}/p{subject_id}/s{study_id}/{dicom_id}.jpg"


def view_rank(view: str | None) -> int:
    return VIEW_ORDER.get((view or "").upper(), len(VIEW_ORDER) + 1)


def read_studies(cfg: MimicConfig, progress: bool = True, n_process: int | None = None) -> list[MimicStudy]:
    """Every study named by the reports, the split CSV or the metadata CSV, sorted by study id; with
    n_process, each report is also split into its sections as it is read (split_while_reading)."""
    if not (cfg.reports or cfg.split_csv or cfg.metadata_csv):
        raise UserError("ingest.mimic_cxr needs at least one of reports, split_csv, metadata_csv")
    images = pl.DataFrame(schema={"dicom_id": pl.Utf8, "study_id": pl.Utf8, "subject_id": pl.Utf8})
    split_of: dict[str, str] = {}
    if cfg.split_csv:
        split = read_split(cfg.split_csv)
        images = pl.concat([images, split.select(images.columns)])
        split_of = dict(split.select("study_id", "split").unique("study_id", keep="first").iter_rows())
    view_of: dict[str, str | None] = {}
    when: dict[str, datetime] = {}
    if cfg.metadata_csv:
        meta = read_metadata(cfg.metadata_csv)
        images = pl.concat([images, meta.select(images.columns)])
        view_of = dict(meta.select("dicom_id", "view").iter_rows())
        for study, date, time in meta.select("study_id", "study_date", "study_time").iter_rows():
            moment = study_datetime(date, time)
            if moment is not None and (study not in when or moment < when[study]):
                when[study] = moment
    images = images.unique(["study_id", "dicom_id"]).sort("study_id", "dicom_id")

    subject_of = dict(images.select("study_id", "subject_id").unique("study_id", keep="first").iter_rows())
    dicoms: dict[str, list[str]] = {}
    for study, dicom in images.select("study_id", "dicom_id").iter_rows():
        dicoms.setdefault(study, []).append(dicom)

    texts: dict[str, str] = {}
    sections: dict[str, tuple[str | None, ...]] = {}
    if cfg.reports:
        reports = tracked(iter_report_files(cfg.reports), desc="mimic reports", unit="report", disable=not progress)
        if n_process is None:
            for subject, study, raw in reports:
                texts[study] = decode_report(raw)
                subject_of.setdefault(study, subject)
        else:
            for subject, study, text, pair in split_while_reading(reports, n_process):
                texts[study] = text
                sections[study] = pair
                subject_of.setdefault(study, subject)

    studies = []
    for study in sorted(subject_of, key=lambda s: (len(s), s)):
        ids = sorted(dicoms.get(study, []), key=lambda d: (view_rank(view_of.get(d)), d))
        studies.append(
            MimicStudy(
                study_id=study,
                subject_id=subject_of[study],
                split=split_of.get(study),
                dicom_ids=tuple(ids),
                views=tuple(view_of.get(d) for d in ids),
                text=texts.get(study),
                sections=None if n_process is None else sections.get(study, (None,) * len(SECTION_NAMES)),
                study_datetime=when.get(study),
            )
        )
    return studies


def study_rows(cfg: MimicConfig, n_process: int, progress: bool = True) -> list[dict[str, Any]]:
    """Ingest's rows for MIMIC-CXR; image paths are absolute under image_root, else relative to the
    JPG tree; the sections are split while the reports are read, in n_process processes."""
    root = Path(cfg.image_root) if cfg.image_root else None
    rows = []
    for s in read_studies(cfg, progress=progress, n_process=n_process):
        texts = dict(zip(SECTION_NAMES, s.sections or (None,) * len(SECTION_NAMES), strict=True))
        findings, impression = texts["findings"], texts["impression"]
        rel = [image_relpath(s.subject_id, s.study_id, d) for d in s.dicom_ids]
        paths = [str(root / r) for r in rel] if root else rel
        missing = sum(not Path(p).is_file() for p in paths) if root else 0
        status = report_status(findings, impression, s.text is not None) or image_status(len(paths), missing) or OK
        rows.append(
            {
                "study_id": s.study_id,
                "subject_id": s.subject_id,
                "split": s.split,
                "image_paths": paths,
                "image_views": list(s.views),
                "findings": findings,
                "impression": impression,
                **context_columns(texts, s.text is not None),
                "study_datetime": s.study_datetime,
                "ingest_status": status,
            }
        )
    return rows
