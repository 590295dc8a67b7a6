"""Which source files a stage runs: the import closure of its stage module (docs/workflow.md).

The workflow declares these files as inputs of the stage's rule, so editing a module reruns exactly
the stages that import it (directly or not) and what depends on them; nothing is listed by hand.
The closure is read from the source with `ast` (nothing is imported): every `import srrg...` and
`from srrg... import ...`, at module level or inside functions, plus string constants that name an
srrg module (modules loaded by name, e.g. the metric registry), plus the package `__init__` of
every module. Data files travel with their code: files next to a package's `__init__` belong to
that package, and a data folder without `__init__.py` (prompts/, schemas/) belongs to the modules
whose source names it in quotes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from pathlib import Path

PACKAGE = "srrg"
PACKAGE_DIR = Path(__file__).resolve().parent
DATA_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".csv", ".txt", ".tsv"})


@lru_cache(maxsize=4)
def module_names(root: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package: dotted name -> file (read once per process)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join((PACKAGE, *parts))] = path
    return names


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports_of(name: str, path: Path, known: Iterable[str], by_name: bool = True) -> set[str]:
    """The srrg modules one module imports (statically, lazily and, with by_name, by a string that
    names them), parents included."""
    known = set(known)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif (
            by_name
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(f"{PACKAGE}.")
        ):
            found.add(node.value)
    resolved = {m for m in found if m in known}
    resolved.update([p for m in resolved for p in _parents(m)])
    resolved.update(_parents(name))
    resolved.discard(name)
    return resolved


@lru_cache(maxsize=4)
def import_graph(root: Path = PACKAGE_DIR, by_name: bool = True) -> dict[str, frozenset[str]]:
    """Module -> the srrg modules it imports; by_name=False keeps import statements only (the
    graph that must have no cycle: a registry that loads modules by name on demand is not one)."""
    return {n: _imports(n, root, by_name) for n in module_names(root)}


def reachable(start: Iterable[str], root: Path = PACKAGE_DIR, by_name: bool = True) -> set[str]:
    """The closure of `start`, parsing only the modules it reaches (cheaper than the whole graph)."""
    names = module_names(root)
    return _walk([s for s in start if s in names], lambda name: _imports(name, root, by_name))


@cache
def _imports(name: str, root: Path, by_name: bool) -> frozenset[str]:
    names = module_names(root)
    return frozenset(imports_of(name, names[name], names, by_name))


def closure(start: Iterable[str], graph: dict[str, frozenset[str]]) -> set[str]:
    """Every module reachable from `start` (start included)."""
    return _walk([s for s in start if s in graph], graph.__getitem__)


def _walk(start: list[str], imports: Callable[[str], frozenset[str]]) -> set[str]:
    """Depth-first closure of `start` over the `imports` edges (start included)."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imports(name) - seen)
    return seen


def data_files(name: str, path: Path, root: Path = PACKAGE_DIR) -> list[Path]:
    """Data files that belong to one module (see the module docstring)."""
    files: list[Path] = []
    if path.name == "__init__.py":
        files.extend(p for p in sorted(path.parent.iterdir()) if p.is_file() and p.suffix in DATA_SUFFIXES)
    text = path.read_text(encoding="utf-8")
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not (p / "__init__.py").exists()):
        if f'"{folder.name}"' in text:
            files.extend(p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in DATA_SUFFIXES)
    return files


def stage_files(stage: str, root: Path = PACKAGE_DIR) -> list[Path]:
    """Source and data files that `python -m srrg <stage>` runs, sorted."""
    names = module_names(root)
    stage_module = f"{PACKAGE}.stages.{stage}"
    if stage_module not in names:
        raise KeyError(f"no stage module {stage_module} in {root}")
    modules = closure([f"{PACKAGE}.__main__", stage_module], import_graph(root))
    files = {names[m] for m in modules}
    files.update(f for m in modules for f in data_files(m, names[m], root))
    return sorted(files)


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Import cycles among modules (a package importing its own submodules is not a cycle: the
    child-to-parent edges are implied, not real imports)."""
    edges = {n: {d for d in deps if not n.startswith(f"{d}.")} for n, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in edges[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
