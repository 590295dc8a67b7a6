"""Table 1's caption names how each RL run was trained (srrg.run_tables.rl_note): the reward's
signature, the group size and how the group was drawn (rl.sampler), the advantage baseline, KL."""

from __future__ import annotations

import json

from srrg.run_tables import RunEntry, rl_note


def entry(tmp_path, name: str, rl: dict) -> RunEntry:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"rl": rl}), encoding="utf-8")
    return RunEntry(name, "Transformer + RL", "json", "s.csv", "p.parquet", str(path))


def test_the_caption_names_the_sampler_and_reads_older_summaries_as_sampled(tmp_path) -> None:
    """Fails if a beam-sampled run were described as sampled (or the reverse), or a summary written
    before rl.sampler existed (no key) broke the tables."""
    rl = {"from": "results/runs/base/model.pt", "reward_signature": "s_score|x", "group_size": 8,
          "baseline": "group", "kl_coef": 0.05}  # fmt: skip
    beam = rl_note([entry(tmp_path, "beam_run", {**rl, "sampler": "beam"})])
    assert beam == (
        "Transformer + RL (beam_run): reinforcement fine-tuning of base with reward s_score|x "
        "(G 8 best beams, group baseline, KL coef 0.05)."
    )
    assert "(G 8 sampled reports," in rl_note([entry(tmp_path, "old_run", rl)])
