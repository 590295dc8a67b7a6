"""Signatures: a compact text beside every number that says what produced it (docs/metrics.md,
"Signatures"), e.g. `bleu|tok:r2gen|srrg:0.1.0` or `chexbert|radeval:2.2.1|labels:14|avg:micro`.

A signature is the metric name, then `field:value` parts in a fixed order, then the srrg version.
Two numbers with different signatures were made differently (another tokenization, label set,
model, section), so the tables and `srrg compare` refuse to put them in one column unless told to.
The signature files that `srrg score` writes next to summary.csv (signatures.csv: key, signature)
are the way signatures travel between stages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from srrg import __version__
from srrg.errors import UserError
from srrg.settings.score import WHOLE_REPORT

SIGNATURES_FILE = "signatures.csv"
UNKNOWN = "unknown"  # a summary written before signatures existed
# fields that change how a number is computed on this machine (speed, retries, where answers are
# cached), never the number itself: they stay out of signatures
RUNTIME_FIELDS = frozenset(
    {
        "cache_dir",
        "concurrency",
        "timeout_s",
        "stage_timeout_s",
        "max_answer_bytes",
        "max_retries",
        "retry_base_delay_s",
        "retry_max_delay_s",
        "api_key_env",
        "batch_size",
        "device",
        "allow_remote",
        "base_url",
        "azure_api_version",
        "max_failure_fraction",
        "threads",
    }
)
SHORT = {"tokenization": "tok"}  # the names published signatures use
# a metric whose options hold the extractor's settings reads the packaged vocabulary (ce,
# s_score_text): its signature carries the vocabulary's hash (docs/metrics.md, "Signatures")
EXTRACTOR_FIELD = "extract"
SUMMARY_FILE = "summary.csv"
SIGNATURE_COLUMN = "signature_"  # summary.csv's signature_<metric> columns (srrg.metrics.score)


def hash8(value: Any) -> str:
    """First 8 hex digits of the sha256 of a value's canonical JSON (texts hash as themselves)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def value_text(value: Any) -> str:
    """One option value as signature text: booleans lower case, floats shortest, `|` and `:` kept out."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "none"
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (list, tuple)):
        text = "+".join(value_text(v) for v in value)
    else:
        text = str(value)
    return text.replace("|", "/").replace(":", "=")


def vocabulary_folder() -> Any:
    """The packaged vocabulary (src/srrg/vocab) as an importlib.resources folder."""
    from importlib import resources

    return resources.files("srrg.vocab")


def vocabulary_hash(folder: Any = None) -> str:
    """hash8 of the vocabulary's data files (each file's name and the sha256 of its bytes; the
    package's code is covered by the srrg version): an edited findings.yaml or chexpert_map.yaml
    changes it, so extraction under another vocabulary never shares a column with the old one."""
    folder = vocabulary_folder() if folder is None else folder
    files = sorted(
        (entry.name, hashlib.sha256(entry.read_bytes()).hexdigest())
        for entry in folder.iterdir()
        if entry.is_file() and not entry.name.endswith(".py") and not entry.name.startswith(".")
    )
    return hash8(files)


def config_parts(cfg: Any) -> list[tuple[str, str]]:
    """`(field, value)` parts of a metric's options in declaration order: scalars as written, a nested
    slice as `model` (when it names one) plus the hash of its other number-changing fields; the
    extractor's slice is followed by `vocab:<hash8>` of the packaged vocabulary it reads."""
    if cfg is None:
        return []
    parts: list[tuple[str, str]] = []
    for f in dataclasses.fields(cfg):
        if f.name in RUNTIME_FIELDS:
            continue
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value) or isinstance(value, dict):
            inner = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else dict(value)
            inner = {k: v for k, v in inner.items() if k not in RUNTIME_FIELDS}
            if inner.get("model"):
                parts.append(("model", value_text(inner["model"])))
            parts.append((f.name, hash8(inner)))
            if f.name == EXTRACTOR_FIELD:
                parts.append(("vocab", vocabulary_hash()))
        else:
            parts.append((SHORT.get(f.name, f.name), value_text(value)))
    return parts


def compose(name: str, parts: Iterable[tuple[str, str]], version: bool = True) -> str:
    """`name|field:value|...|srrg:<version>`."""
    items = [name, *(f"{k}:{v}" for k, v in parts)]
    return "|".join([*items, f"srrg:{__version__}"] if version else items)


def insert_part(signature: str, key: str, value: str) -> str:
    """The signature with `key:value` added just before its srrg version (at the end without one)."""
    head, sep, version = signature.rpartition("|srrg:")
    return f"{head}|{key}:{value}{sep}{version}" if sep else f"{signature}|{key}:{value}"


def with_section(signature: str, section: str) -> str:
    """The signature of a number scored on one report section only (`both` = the whole text)."""
    return signature if section == WHOLE_REPORT else insert_part(signature, "section", section)


def prompt_hash(requests: Iterable[Any]) -> str:
    """hash8 of the prompt templates requests were rendered from (each `id@version`, the version
    being the hash of the template text), whatever the reports filled into them."""
    return hash8(sorted({f"{r.template}@{r.template_version}" for r in requests}))


def with_prompts(signature: str, requests: Callable[[bool], Iterable[Any]]) -> str:
    """A judge's signature with `prompt:<hash8>` of every template it may send: requests(structured)
    builds its requests for one empty pair, with text answers (False) and schema answers (True), so
    an edited prompt never shares a column with the old one (docs/metrics.md, "Signatures")."""
    return insert_part(signature, "prompt", prompt_hash([*requests(False), *requests(True)]))


def metric_of(signature: str) -> str:
    return signature.split("|", 1)[0]


def write_signatures(path: str | Path, signatures: Mapping[str, str]) -> None:
    """signatures.csv: one row per output key (summary and per-report), its signature."""
    import polars as pl

    from srrg.io import write_text

    frame = pl.DataFrame(
        {"key": list(signatures), "signature": list(signatures.values())},
        schema={"key": pl.String, "signature": pl.String},
    )
    write_text(Path(path), frame.write_csv())


def column_signatures(
    per_system: Mapping[str, Mapping[str, str]], keys: Sequence[str], allow_mixed: bool, what: str
) -> dict[str, str]:
    """The one signature of each key across systems/runs. Different signatures in one column are a
    UserError naming both (unless allow_mixed: then the column's signature lists every variant,
    joined by ` vs `). A system with signatures but none for a key counts as `unknown`; a system
    without any (scored before signatures existed) cannot be checked and adds `+unknown`. Without
    allow_mixed, an unsigned system and a key some system has no signature for are refused too: a
    number that cannot be checked is not put beside one that can (docs/metrics.md, "Signatures")."""
    signed = {name: sigs for name, sigs in per_system.items() if sigs}
    unsigned = len(signed) < len(per_system)
    if unsigned and not allow_mixed:
        missing = [name for name in per_system if name not in signed]
        verb = "has" if len(missing) == 1 else "have"
        raise UserError(
            f"{what}: {', '.join(missing)} {verb} no signature (no {SIGNATURES_FILE} and no signature_<metric> "
            f"column in its {SUMMARY_FILE}), so its numbers cannot be checked; rescore with srrg score or pass "
            "--allow-mixed"
        )
    out: dict[str, str] = {}
    for key in keys:
        seen = {name: sigs.get(key, UNKNOWN) for name, sigs in signed.items()}
        variants = list(dict.fromkeys(seen.values()))
        lacking = [name for name, sig in seen.items() if sig == UNKNOWN]
        if lacking and len(variants) == 1 and not allow_mixed:
            raise UserError(
                f"{what}: {key} has no signature in {', '.join(lacking)}; rescore with srrg score or pass --allow-mixed"
            )
        if len(variants) > 1 and not allow_mixed:
            detail = "; ".join(f"{name}: {sig}" for name, sig in seen.items())
            raise UserError(f"{what}: {key} was computed differently ({detail}); rescore alike or pass --allow-mixed")
        out[key] = " vs ".join(variants) + ("+unknown" if unsigned and variants else "") if variants else UNKNOWN
    return out
