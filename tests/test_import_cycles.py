"""Imports run one way, inside every app and between apps: no module imports, directly or through
others, a module that imports it back.

Every ``import`` statement counts, at module level or inside a function: an import deferred
into a function still makes the two modules depend on each other, it only hides the cycle from
Python.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.dual_db

# Cycles tolerated for now, each one strongly connected group of modules. The list may only
# shrink: an entry that no longer forms a cycle fails the test until it is removed here.
KNOWN_CYCLES: set[frozenset[str]] = set()


def first_party_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the repository's packages (each folder at the root
    holding an ``__init__.py``, and platform/config), tests aside."""
    roots = [path.parent for path in ROOT.glob("*/__init__.py") if path.parent.name != "tests"]
    roots.append(ROOT / "platform" / "config")
    modules: dict[str, Path] = {}
    for package in roots:
        base = package.parent
        for path in package.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name the module's import statements may refer to, relative ones resolved."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                prefix = package[: len(package) - node.level + 1]
                base = ".".join([*prefix, base] if base else prefix)
            # ``from package import name`` names a module or something defined in the package.
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return found


def import_graph() -> nx.DiGraph:
    modules = first_party_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in imported_names(name, path):
            # The longest first-party module the name lies in (a name imported from a module).
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph.add_edge(name, target)
    return graph


def cycles(graph: nx.DiGraph) -> dict[frozenset[str], list[str]]:
    """Each group of modules that import each other, with one cycle through it as an example."""
    found = {}
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            example = [source for source, _ in nx.find_cycle(graph.subgraph(group))]
            found[frozenset(group)] = [*example, example[0]]
    return found


def test_the_graph_sees_the_apps_and_their_imports() -> None:
    graph = import_graph()
    for app in ("config", "ingestion", "grading", "leaderboard", "endpoints"):
        assert app in graph
    assert graph.has_edge("ingestion.tasks", "ingestion.services.sources")


def test_no_import_cycle_inside_or_between_apps() -> None:
    found = cycles(import_graph())
    new = {group: path for group, path in found.items() if group not in KNOWN_CYCLES}
    assert not new, "import cycles:\n" + "\n".join(" -> ".join(path) for path in new.values())


def test_the_known_cycles_still_exist() -> None:
    gone = KNOWN_CYCLES - set(cycles(import_graph()))
    assert not gone, f"no longer cycles, remove them from KNOWN_CYCLES: {sorted(sorted(g) for g in gone)}"
