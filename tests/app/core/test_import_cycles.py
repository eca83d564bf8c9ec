"""No module of the app or the library imports another that imports it back,
at module level or inside a function (issue 23).

The one exception is named: reviewapp/tasks.py imports each service inside the
task's body, because services import the tasks module to queue tasks.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("reviewapp", "scoring")
# Modules whose imports inside functions are not counted, and why.
FUNCTION_IMPORTS_ALLOWED = {
    "reviewapp.tasks": "a task imports its service in its body; services import tasks to queue them",
}


def module_files() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imported_names(name: str, path: Path) -> list[str]:
    """Every module name an import statement in the file can load: the module
    itself and, for `from X import y`, X.y as well (y may be a submodule)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if name in FUNCTION_IMPORTS_ALLOWED else ast.walk(tree)
    is_package = path.name == "__init__.py"
    names = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for target in imported_names(name, path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_it_finds_no_import_cycle():
    assert cycles(import_graph()) == []


def test_it_sees_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_it_counts_imports_inside_functions(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("import os\n\ndef later():\n    from reviewapp.core import work\n")
    assert imported_names("reviewapp.example", path) == ["os", "reviewapp.core", "reviewapp.core.work"]


def test_it_reads_relative_imports_from_the_package(tmp_path):
    path = tmp_path / "__init__.py"
    path.write_text("from .base import make\n")
    assert imported_names("scoring.llm", path) == ["scoring.llm.base", "scoring.llm.base.make"]


# Which domains each domain of the app may import, in the direction the
# foreign keys run (runs <- scorings <- review <- judges <- versions), with
# core below all. Modules outside the domains (api, urls, tasks, sweep,
# models, settings, templatetags, management) sit above them. Two imports
# run against the grain, each for a reason:
AGAINST_THE_GRAIN = {
    # A run's answers and its first scoring are stored in one transaction, so
    # a stored run is never left without a scoring; the run API shows scores.
    ("runs", "scorings"),
    # The lead queue routes a judge's disagreement with people to a lead.
    ("review", "judges"),
}
DOMAINS = ("core", "accounts", "runs", "scorings", "review", "judges", "paired", "versions")
BELOW = {
    "core": set(),
    "accounts": {"core"},
    "runs": {"core", "accounts"},
    "scorings": {"core", "accounts", "runs"},
    "review": {"core", "runs", "scorings"},
    "judges": {"core", "accounts", "runs", "scorings", "review"},
    "paired": {"core", "runs", "scorings", "review"},
    "versions": {"core", "accounts", "runs", "scorings", "review", "judges", "paired"},
}
# Every domain may queue a task; the tasks module imports services only
# inside its tasks (see FUNCTION_IMPORTS_ALLOWED).
SHARED = {"tasks"}


def domain_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "reviewapp" and parts[1] in DOMAINS else None


def domain_imports() -> set[tuple[str, str, str]]:
    """(importing domain, imported domain, importing module) for every import
    between two domains; a model imported from reviewapp.models counts as an
    import of the domain that defines it."""
    import reviewapp.models

    found = set()
    for name, path in module_files().items():
        source = domain_of(name)
        if source is None:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "reviewapp.models":
                targets = [getattr(getattr(reviewapp.models, alias.name), "__module__", "") for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module == "reviewapp":
                targets = [f"reviewapp.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module]
            else:
                continue
            for target in targets:
                imported = domain_of(target)
                if imported is None and target.startswith("reviewapp."):
                    top = target.split(".")[1]
                    if top not in SHARED and top != "models":
                        found.add((source, f"reviewapp.{top}", name))
                elif imported and imported != source:
                    found.add((source, imported, name))
    return found


def test_each_domain_imports_only_the_domains_below_it():
    wrong = sorted(
        (source, imported, module)
        for source, imported, module in domain_imports()
        if imported not in BELOW[source] and (source, imported) not in AGAINST_THE_GRAIN
    )
    assert wrong == []
