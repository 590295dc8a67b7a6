"""Kendall's tau of the judge being tuned on the test split after chosen epochs (VERT's per-epoch
progression, epochs 1, 2, 3 and 5): at the end of each such epoch the model answers every test
pair with a human judgement greedily, read by the metric's own parser (vert, green, gema), and tau-b against
the human judgement (negated when lower is better, as srrg.metaeval orients it) is logged into
the Trainer's history, so a resumed fit keeps the epochs it had already evaluated. The table has
one row per configured epoch; an epoch the training never reached says so."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from srrg.io import atomic_path, write_text
from srrg.judge_train.dataset import HYP_ENTITIES, PAIR, REF_ENTITIES, SUBJECTIVE
from srrg.metaeval import tables
from srrg.metrics.judges.common import NO_RESPONSE, Reply
from srrg.rank_correlation import coefficient, orient

TAU_KEY = "test_epoch"  # marks the Trainer history entry of an evaluated epoch (its fields prefixed test_)
OK_TAU, NO_TAU, NOT_REACHED = "ok", "too_few_scores", "not_reached"
SCHEMA = {"epoch": pl.Int64, "step": pl.Int64, "kendall": pl.Float64, "n_test": pl.Int64, "n_scored": pl.Int64,
          "status": pl.String}  # fmt: skip


def judge_scores(mode: str, test: pl.DataFrame, reply_of: Mapping[str, Reply]) -> tuple[list[float], list[float]]:
    """(judge score, human judgement) per test pair from the answers to each test row's messages,
    read by the metric the tuned model serves: vert's direct score (score), the GREEN score
    (analysis), or GEMA from its three agents' answers (gema)."""
    if mode != "gema":
        pairs = test.filter(pl.col("request") == PAIR)
        return score_replies(mode, [reply_of[m] for m in pairs["messages"]]), pairs["human"].to_list()
    from srrg.metrics.judges.gema import score_answers

    message = {(p, r): m for p, r, m in test.select("pair_id", "request", "messages").iter_rows()}
    pairs = test.filter(pl.col("request") == SUBJECTIVE)
    ref, hyp = ([reply_of[message[(p, r)]] for p in pairs["pair_id"]] for r in (REF_ENTITIES, HYP_ENTITIES))
    result = score_answers(ref, hyp, [reply_of[m] for m in pairs["messages"]])
    return list(result.per_report["gema"]), pairs["human"].to_list()


def score_replies(mode: str, replies: Sequence[Reply]) -> list[float]:
    """The judge's score per pair answer (score: vert's direct score, analysis: the GREEN score)."""
    if mode == "analysis":
        from srrg.metrics.judges.green import score_responses as green

        return list(green(replies).per_report["green"])
    from srrg.metrics.judges.vert import score_responses as vert

    return list(vert(replies).per_report["vert"])


def tau_row(epoch: int, step: int, scores: Sequence[float], human: Sequence[float], lower: bool) -> dict[str, Any]:
    """One table row: Kendall tau-b over the test pairs with a finite score (NaN and status
    too_few_scores with fewer than 3 of them or a constant side)."""
    x, y = np.asarray(scores, dtype=float), orient(human, lower)
    keep = np.isfinite(x) & np.isfinite(y)
    tau, _ = coefficient("kendall", x[keep], y[keep])
    return {"epoch": epoch, "step": step, "kendall": tau, "n_test": len(x), "n_scored": int(keep.sum()),
            "status": OK_TAU if math.isfinite(tau) else NO_TAU}  # fmt: skip


def answer_test(model: Any, tokenizer: Any, test: pl.DataFrame, max_tokens: int, batch_size: int) -> list[Reply]:
    """Greedy answers of the model to each test row's messages (a failed batch: no_response)."""
    from srrg.llm.local_backend import answer_batch

    conversations = [json.loads(m) for m in test["messages"]]
    replies: list[Reply] = []
    for start in range(0, len(conversations), batch_size):
        batch = conversations[start : start + batch_size]
        try:
            out = answer_batch(tokenizer, model, batch, max_tokens, 0.0, model.device)
        except (RuntimeError, ValueError) as exc:  # out of memory: the epoch's answers are missing, not fatal
            replies += [Reply(None, NO_RESPONSE, f"{type(exc).__name__}: {exc}")] * len(batch)
            continue
        replies += [Reply(r.text, r.status, r.error or "") for r in out]
    return replies


def epoch_callback(test: pl.DataFrame, mode: str, lower: bool, epochs: Sequence[int], tokenizer: Any, **kw: Any) -> Any:
    """A transformers TrainerCallback that evaluates at the end of each epoch in `epochs` (test:
    the test split's example rows with a human judgement; kw: max_tokens, batch_size of answer_test)."""
    from transformers import TrainerCallback

    tokenizer.padding_side = "left"  # for answer_batch; training pads its batches itself (train.Collator)

    class EpochTau(TrainerCallback):
        def on_epoch_end(self, args: Any, state: Any, control: Any, model: Any = None, **_: Any) -> None:
            if model is not None:
                self.evaluate(state, model)

        def evaluate(self, state: Any, model: Any, missing_only: bool = False) -> None:
            """Log the tau of the model as it is at the end of an epoch asked for (missing_only:
            unless the history has that epoch already)."""
            epoch = round(state.epoch or 0)
            if abs((state.epoch or 0) - epoch) > 1e-6 or epoch not in epochs or test.is_empty():
                return  # stopped inside an epoch (max_steps), or an epoch not asked for
            if missing_only and any(e.get(TAU_KEY) == epoch for e in state.log_history):
                return
            was_training = model.training
            model.eval()
            unique = test.unique("messages", maintain_order=True)  # a report GEMA's entity agent reads twice
            try:
                replies = dict(zip(unique["messages"], answer_test(model, tokenizer, unique, **kw)))
            finally:
                model.train(was_training)
            scores, human = judge_scores(mode, test, replies)
            row = tau_row(epoch, state.global_step, scores, human, lower)
            state.log_history.append({f"test_{k}": v for k, v in row.items()})

    return EpochTau()


def epoch_table(history: Sequence[Mapping[str, Any]], epochs: Sequence[int]) -> pl.DataFrame:
    """One row per configured epoch from the Trainer history (the last evaluation of an epoch
    wins: a resumed run may repeat one); epochs never reached get status not_reached."""
    done = {int(e[TAU_KEY]): {k.removeprefix("test_"): v for k, v in e.items() if k.startswith("test_")}
            for e in history if TAU_KEY in e}  # fmt: skip
    missing = {"step": None, "kendall": math.nan, "n_test": None, "n_scored": None, "status": NOT_REACHED}
    rows = [done.get(e, {"epoch": e, **missing}) for e in sorted(set(epochs))]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def epoch_markdown(table: pl.DataFrame, caption: str) -> str:
    rows = [[str(r["epoch"]), "-" if r["step"] is None else str(r["step"]),
             "-" if not math.isfinite(r["kendall"]) else f"{r['kendall']:.3f}",
             "-" if r["n_scored"] is None else f"{r['n_scored']}/{r['n_test']}", r["status"]]
            for r in table.iter_rows(named=True)]  # fmt: skip
    return tables.markdown(("Epoch", "Step", "Kendall τb (test)", "Scored", "Status"), rows, caption)


def epoch_figure(table: pl.DataFrame, path: Path, title: str) -> None:
    """Tau against epoch (evaluated epochs only) as a PNG, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = table.filter(pl.col("status") == OK_TAU)
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
    ax.plot(done["epoch"].to_list(), done["kendall"].to_list(), "o-")
    ax.set_xticks(table["epoch"].to_list())
    ax.set_xlabel("epoch")
    ax.set_ylabel("Kendall τb on the test split")
    ax.set_title(title, fontsize=9, wrap=True)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)


def write_epoch_outputs(table: pl.DataFrame, out_dir: Path, caption: str) -> None:
    """epoch_tau.csv, epoch_tau.md and epoch_tau.png in out_dir."""
    with atomic_path(out_dir / "epoch_tau.csv") as tmp:
        table.write_csv(tmp)
    write_text(out_dir / "epoch_tau.md", epoch_markdown(table, caption))
    epoch_figure(table, out_dir / "epoch_tau.png", caption)
