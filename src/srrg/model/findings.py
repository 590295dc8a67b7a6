"""The auxiliary finding loss: which positive findings a study's image shows, read from its tokens.

A report decoder trained only on next-token cross-entropy spends almost all of its gradient on the
report's wording (keys, punctuation, the usual negatives); the few tokens that depend on the image
(finding names) barely train the encoder, and the model settles on the most frequent reports. A
linear head over the mean-pooled encoder tokens, trained with binary cross-entropy against the
positive finding names of the study's structured report, gives the encoder a direct signal
(classification-guided report generation; docs/model.md, `model.finding_loss`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import nn


def finding_labels(positives: Iterable[Sequence[str]]) -> list[str]:
    """The head's label set: every positive finding name of the training reports, most frequent
    first (ties by name), so the order is reproducible from the same training data."""
    counts = Counter(name for names in positives for name in set(names))
    return sorted(counts, key=lambda n: (-counts[n], n))


def multi_hot(labels: Sequence[str], positives: Sequence[Sequence[str]], device: torch.device) -> torch.Tensor:
    """(B, len(labels)) 0/1 targets; names outside the label set are ignored."""
    index = {name: i for i, name in enumerate(labels)}
    out = torch.zeros((len(positives), len(labels)), device=device)
    for row, names in enumerate(positives):
        for name in names:
            if name in index:
                out[row, index[name]] = 1.0
    return out


class FindingHead(nn.Module):
    """Linear logits over the mean of the image tokens (B, N, C) -> (B, len(labels))."""

    def __init__(self, in_dim: int, labels: Sequence[str]) -> None:
        super().__init__()
        self.labels = list(labels)
        self.linear = nn.Linear(in_dim, len(self.labels))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.linear(tokens.mean(dim=1))

    def study_logits(self, tokens: torch.Tensor, present: torch.Tensor | None = None) -> torch.Tensor:
        """(B, len(labels)) logits of each study. With `present` (B, N), tokens (K, T, C) are the
        encoder tokens of the K present views (row-major) and a study's logit is its views' largest:
        a finding is in the study when any view shows it (a small effusion on the lateral only)."""
        logits = self(tokens)
        if present is None:
            return logits
        per_view = logits.new_full((*present.shape, logits.shape[-1]), float("-inf"))
        per_view[present] = logits
        return per_view.amax(dim=1)

    def loss(
        self, tokens: torch.Tensor, positives: Sequence[Sequence[str]], present: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean binary cross-entropy over studies and labels (study_logits)."""
        logits = self.study_logits(tokens, present)
        return nn.functional.binary_cross_entropy_with_logits(logits, multi_hot(self.labels, positives, logits.device))
