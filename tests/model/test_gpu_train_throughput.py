"""The GPU script's code path on CPU with tiny sizes and a 2-step budget (benchmarks/gpu_train_throughput.py):
both parts run and print what they measured; the figures themselves need a GPU."""

from __future__ import annotations

import json
import math
import sys

import pytest
from paths import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
import gpu_train_throughput as gpu  # noqa: E402


def test_phantom_studies_are_valid_reports_a_reader_can_learn():
    from srrg.phantom import visible_report
    from srrg.report import StructuredReport, from_obj, parse_report

    reports = gpu.studies(50, 0, "x")
    assert reports == gpu.studies(50, 0, "x") and len({sid for sid, _ in reports}) == 50
    for _, text in reports:
        report, status = parse_report(text)
        assert status == "valid"
        assert visible_report(from_obj(json.loads(text))[0]) == report  # everything in it is drawn
    assert any(from_obj(json.loads(t))[0] == StructuredReport() for _, t in reports)  # some normal studies


def test_phantoms_drawn_in_parallel_equal_serial_ones():
    batch = gpu.studies(4, 0, "x")
    serial = gpu.render_all(batch, 32, 1)
    assert serial.shape == (4, 3, 32, 32) and serial.dtype.is_floating_point
    assert (gpu.render_all(batch, 32, 2) == serial).all()


def test_peak_flops_table():
    import torch

    assert gpu.peak_flops(torch.device("cpu"), None) is None
    assert gpu.peak_flops(torch.device("cpu"), 100.0) == 100e12


@pytest.mark.slow
def test_tiny_run_prints_both_parts(capsys):
    assert gpu.main(["--tiny"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    evals = [r for r in records if r["part"] == "learn" and "step" in r]
    learn = next(r for r in records if r["part"] == "learn" and "steps" in r)
    tp = next(r for r in records if r["part"] == "throughput")
    assert [r["step"] for r in evals] == [2] and learn["steps"] == 2 and learn["test_studies"] == 4
    assert 0.0 <= learn["parse_rate"] <= 1.0 and math.isfinite(learn["constant"])
    assert learn["margin"] == pytest.approx(learn["s_score"] - learn["constant"])
    assert tp["steps"] == 2 and tp["gradient_checkpointing"] is True and tp["tokens_per_s"] > 0
    assert tp["model_gflops_per_sample"] > 0 and tp["mfu"] is None  # no peak known for a CPU
    assert tp["target_tokens_per_batch"] > 0 and tp["prompt_tokens_per_sample"] > 0


def test_without_a_gpu_the_full_run_refuses(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert gpu.main(["--part", "throughput"]) == 2
    assert "no CUDA device" in capsys.readouterr().err
