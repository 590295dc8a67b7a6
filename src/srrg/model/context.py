"""Study context as model input (docs/model.md, "Study context"): the indication and the prior
report as text, and several views of a study, each marked with a learned view embedding.

A radiologist reads the request and the prior beside every view; a model without the prior
invents comparisons it cannot know (srrg.metrics.temporal measures that). Every switch of
`train.model.context` is off by default, and a parameter is created only when its switch is on,
so a run with all of them off draws the same random numbers and writes the same weights as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn
from transformers import PreTrainedTokenizerBase

from srrg.errors import UserError
from srrg.model.images import row_views
from srrg.model.prompt import IMAGE_SLOT, Prompt, prompt_text
from srrg.settings.model import ContextConfig, ModelConfig, check_context

IGNORE = -100  # label id that the decoder's loss skips (as srrg.model.network)


def check_supported(model: ModelConfig) -> None:
    """srrg.settings.model.check_context as a UserError (one line, exit 2)."""
    try:
        check_context(model)
    except ValueError as err:
        raise UserError(str(err)) from None


def view_inputs(
    row: Mapping[str, Any], mode: str, image_root: str | None, size: int, cache: Any, n: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The (n, 3, size, size) images of a study's first n views (row_views: frontal first, each once) and
    their (n,) presence; missing slots are zeros and absent. Phantoms are drawn per view
    (srrg.phantom.render_views); a placeholder study has one image."""
    from srrg.model.images import phantom_views, study_image

    paths, views = row_views(row)
    study_id = str(row["study_id"])
    paths = paths[:n]
    if mode == "phantom":
        images = phantom_views(study_id, row.get("structured"), size, views, n)
    elif mode == "real":
        images = [study_image({**row, "image_paths": [p]}, mode, image_root, size, cache) for p in paths]
    else:
        images = [study_image(row, mode, image_root, size, cache)]
    out = torch.zeros((n, *images[0].shape), dtype=images[0].dtype)
    out[: len(images)] = torch.stack(images)
    return out, torch.arange(n) < len(images)


def truncate_words(text: str, max_words: int) -> str:
    """The first max_words words of text (whitespace collapsed)."""
    return " ".join(text.split()[:max_words])


def context_text(cfg: ContextConfig, row: Mapping[str, Any], prior_report: str | None = None) -> str:
    """The context a prediction is made from, as the model reads it ("" when every text switch is
    off): `Indication: ...` and `Prior report: ...` lines; a study without one says "none", so the
    model can tell a first study from a missing field."""
    lines = []
    if cfg.indication:
        lines.append(f"Indication: {(row.get('indication') or '').strip() or 'none'}")
    if cfg.prior_report:
        prior = truncate_words(prior_report, cfg.prior_words) if prior_report else ""
        lines.append(f"Prior report: {prior or 'none'}")
    return "\n".join(lines)


def prompt_texts(study: Sequence[str] | None, findings: Sequence[str] | None) -> list[str] | None:
    """One prompt text per study: its context lines (context_text), then its finding line
    (finding_line); None when both are off (every study then reads the same fixed prompt)."""
    if study is None:
        return None if findings is None else list(findings)
    if findings is None:
        return list(study)
    return [f"{text}\n{line}" if text else line for text, line in zip(study, findings, strict=True)]


def finding_line(names: Sequence[str]) -> str:
    """The finding prompt (model.context.findings): the findings the model's finding head sees,
    or "none", so that a normal study reads differently from a missing line (docs/model.md)."""
    return f"Findings seen in the image: {', '.join(names) or 'none'}"


def context_prompt(tok: PreTrainedTokenizerBase, target: str, context: str) -> Prompt:
    """The S-RRG prompt (srrg.model.prompt) with the context text before the image: the ids
    before and after the image slot. An empty context gives build_prompt's ids."""
    before, after = prompt_text(tok, target).split(IMAGE_SLOT)
    if context:
        before = before.replace("<Img>", f"{context}\n<Img>", 1)
    enc = tok([before, after], add_special_tokens=False)["input_ids"]
    return Prompt(tuple(enc[0]), tuple(enc[1]))


def prefix_ids(tok: PreTrainedTokenizerBase, contexts: Sequence[str], max_tokens: int) -> list[list[int]]:
    """The baseline decoder's prefix tokens of each study: its context text, cut to max_tokens."""
    enc = tok(list(contexts), add_special_tokens=False)["input_ids"]
    return [ids[:max_tokens] for ids in enc]


def prefixed_inputs(
    bos_id: int, pad_id: int, prefixes: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Decoder input ids, attention mask and labels for [BOS | prefix | target], right padded: the
    loss is on the target tokens only (the prefix is read, never predicted)."""
    rows = [[bos_id, *p, *t] for p, t in zip(prefixes, targets, strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for i, (row, prefix, target) in enumerate(zip(rows, prefixes, targets, strict=True)):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
        start = 1 + len(prefix)
        labels[i, start : start + len(target)] = torch.tensor(list(target), dtype=torch.long)
    return ids, mask, labels


def prefixed_prompts(bos_id: int, pad_id: int, prefixes: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """The baseline decoder's generation prompts [BOS | prefix] and their 0/1 mask, left padded so
    that every study's report begins at the same column (generate then numbers each row's
    positions from its mask, as teacher forcing numbers them: BOS at 0)."""
    width = 1 + max(len(p) for p in prefixes)
    ids = torch.full((len(prefixes), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prefixes), width), dtype=torch.long)
    for i, prefix in enumerate(prefixes):
        ids[i, width - 1 - len(prefix) :] = torch.tensor([bos_id, *prefix], dtype=torch.long)
        mask[i, width - 1 - len(prefix) :] = 1
    return ids, mask


class ViewEmbedding(nn.Module):
    """One learned vector per view slot (frontal first), added to every token of that view."""

    def __init__(self, n_views: int, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_views, width))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, present: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (B, N, T, D) of N view slots, present (B, N) bool -> (B, N*T, D) tokens with
        their slot's embedding, zero at padded slots, and the (B, N*T) 0/1 mask of real tokens."""
        b, n, t, d = tokens.shape
        marked = (tokens + self.weight[:n].view(1, n, 1, d)) * present.view(b, n, 1, 1).to(tokens.dtype)
        mask = present.view(b, n, 1).expand(b, n, t).reshape(b, n * t).long()
        return marked.reshape(b, n * t, d), mask


def place_views(
    real: torch.Tensor, present: torch.Tensor, embedding: ViewEmbedding
) -> tuple[torch.Tensor, torch.Tensor]:
    """The (K, T, D) tokens of the K present views (row-major over present: only they are encoded,
    so a padded slot neither moves BatchNorm statistics nor costs a forward pass) in their (B, N)
    slots, each marked with its view embedding: (B, N*T, D) tokens, zero at padded slots, and their
    mask."""
    b, n = present.shape
    tokens = real.new_zeros((b, n, *real.shape[1:]))
    tokens[present] = real
    return embedding(tokens, present)
