"""Every RadEval-backed scorer srrg wraps imports and is built up to its weight loading under the
pinned RadEval (docs/metrics.md, "RadEval metrics"), with no weights: the hub is offline and the
cache empty, so the hub client refusing to fetch is the loader boundary each build must reach.

The other RadEval tests replace `radeval_metric` with fakes; these run RadEval's own import and
constructor, which is where a renamed package, a vendored module importing a missing dependency or
a changed class path breaks a metric before it scores anything. Each build runs in a fresh
interpreter: the hub reads HF_HUB_OFFLINE when it is first imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from srrg.metrics import radeval as rv
from srrg.metrics.base import Metric

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("radeval") is None,
    reason=f"RadEval is not installed (the radeval extra: {rv.INSTALL})",
)

# hub-side frames: where a weight download starts (huggingface_hub, transformers' hub helpers)
HUB_FRAMES = ("huggingface_hub/", "transformers/utils/hub.py")

BUILD = r"""
import json, sys, traceback
from srrg.metrics import radeval as rv
rv._alias_old_package_name()
from radeval.metrics import _registry
out = {}
try:
    cls = _registry.get_metric_class(sys.argv[1])
    out["class_file"] = sys.modules[cls.__module__].__file__
    cls()
    out["built"] = True
except BaseException as exc:
    frames, seen = [], exc
    while seen is not None:
        frames += [f.filename for f in traceback.extract_tb(seen.__traceback__)]
        seen = seen.__cause__ or seen.__context__
    out.update(error=type(exc).__name__, module=getattr(exc, "name", None), message=str(exc)[:300], frames=frames)
print("RESULT " + json.dumps(out))
"""


def wrapped() -> dict[str, str]:
    """srrg metric name -> the RadEval registry name it loads (every RadEval-backed class)."""
    classes = [
        c
        for c in vars(rv).values()
        if isinstance(c, type) and issubclass(c, Metric) and c.__module__ == rv.__name__ and "name" in vars(c)
    ]
    return {c.name: getattr(c, "radeval_name", "f1chexbert") for c in classes}


def build(radeval_name: str, tmp_path) -> dict:
    """Import RadEval's class and construct it in a fresh interpreter, hub offline, cache empty."""
    env = os.environ | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "SRRG_MODELS_DIR": str(tmp_path / "models"),
        "OMP_NUM_THREADS": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", BUILD, radeval_name], env=env, capture_output=True, text=True, timeout=600
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"{radeval_name}: no result (rc {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(lines[-1].removeprefix("RESULT "))


def test_every_wrapped_scorer_is_listed() -> None:
    """A RadEval-backed metric added without a registry name would be left out of the builds."""
    assert wrapped() == {
        "radeval_bleu": "bleu",
        "radeval_rouge": "rouge",
        "bertscore": "bertscore",
        "radcliq": "radcliq",
        "ratescore": "ratescore",
        "srrbert": "srrbert",
        "green_model": "green",
        "radgraph": "radgraph",
        "chexbert": "f1chexbert",
    }


@pytest.mark.slow
@pytest.mark.parametrize("radeval_name", ["bertscore", "radcliq", "srrbert", "green", "radgraph", "f1chexbert"])
def test_model_scorer_builds_up_to_its_weights(radeval_name: str, tmp_path) -> None:
    """The constructor runs (a frame in the class's own module) and stops in the hub client
    (weights not fetched). Fails on an import error (RadGraph's vendored code importing `RadEval`
    by its former name: radgraph, radcliq), a missing module, or a class that no longer builds."""
    result = build(radeval_name, tmp_path)
    assert "built" not in result, f"{radeval_name} built without weights: the hub was not offline"
    assert result["error"] not in {"ImportError", "ModuleNotFoundError", "AttributeError", "NameError"}, result
    assert result.get("class_file") in result["frames"], result
    assert any(h in f for f in result["frames"] for h in HUB_FRAMES), result


@pytest.mark.slow
@pytest.mark.parametrize("radeval_name", ["bleu", "rouge"])
def test_weightless_scorer_builds(radeval_name: str, tmp_path) -> None:
    """BLEU and ROUGE load no weights: they must build outright."""
    assert build(radeval_name, tmp_path).get("built") is True


@pytest.mark.slow
def test_ratescore_needs_medspacy(tmp_path) -> None:
    """RaTEScore imports medspacy, which the Python 3.11 install (RadEval without its dependencies)
    lacks, as docs/metrics.md says; with medspacy it must build up to its weights like the others."""
    result = build("ratescore", tmp_path)
    if importlib.util.find_spec("medspacy") is None:
        assert (result["error"], result["module"]) == ("ModuleNotFoundError", "medspacy"), result
    else:
        assert any(h in f for f in result["frames"] for h in HUB_FRAMES), result


def test_old_package_name_is_the_installed_module() -> None:
    """`RadEval.x` must be the very module `radeval.x` (a second copy would register RadGraph's
    classes twice); without the alias the vendored imports fail outright."""
    rv._alias_old_package_name()
    rv._alias_old_package_name()
    import radeval.metrics._registry as lower

    upper = importlib.import_module("RadEval.metrics._registry")
    assert upper is lower
    assert sum(isinstance(f, rv._OldPackageName) for f in sys.meta_path) == 1
