"""The floors of the import graph (docs/config.md, "Settings classes"): the settings classes import
only the standard library and each other (what each layer may import of srrg, the config tree's
floor among them: tests/cli/test_stages.py); `srrg compare` and `srrg.metaeval` share their
statistics through lower modules instead of importing each other; checking every section loads
no heavy library.

Read from the source with ast (srrg.codedeps), imports inside functions included, so a lazy
import cannot hide an edge; a subprocess then shows what building every section really loads.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from srrg.codedeps import import_graph, module_names

SETTINGS = "srrg.settings"


def _imported_names(path) -> set[str]:
    """Every absolute module name one file imports (module level and inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            names.add(node.module or "")
    return names


def _in_settings(name: str) -> bool:
    return name == SETTINGS or name.startswith(f"{SETTINGS}.")


def test_settings_import_only_the_standard_library_and_settings() -> None:
    modules = {n: p for n, p in module_names().items() if _in_settings(n)}
    assert len(modules) > 5  # the package is there, with its section modules
    outside = {
        (name, imported)
        for name, path in modules.items()
        for imported in _imported_names(path)
        if not _in_settings(imported) and imported.split(".")[0] not in sys.stdlib_module_names
    }
    assert outside == set()


def test_compare_and_metaeval_do_not_import_each_other() -> None:
    graph = import_graph(by_name=False)
    metaeval = {n for n in graph if n == "srrg.metaeval" or n.startswith("srrg.metaeval.")}
    assert sorted(graph["srrg.compare"] & metaeval) == []
    assert sorted(m for m in metaeval if "srrg.compare" in graph[m]) == []


def test_checking_every_section_loads_no_heavy_library() -> None:
    """What `snakemake -n` pays for the pre-check: the embedded config checked whole, without
    torch, spaCy, polars or transformers."""
    code = (
        "import json, sys\n"
        "from srrg.config_tree import check_workflow_config\n"
        "from srrg.text.decode import read_mapping_file\n"
        "check_workflow_config(read_mapping_file('config.yaml'))\n"
        "heavy = ('torch', 'spacy', 'polars', 'transformers', 'numpy', 'lightning')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
