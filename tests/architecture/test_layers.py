"""The layers only point down, and no modules import each other in a circle.

`lint-imports` checks the contracts in .importlinter (the layer order and what the boards room and
the compiler must not know); the cycle check below looks at every module, which a layers contract
does not (it allows anything inside one package).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp


REPO = Path(__file__).resolve().parents[2]

# Cycles known and left for their owners, each with why: none now. A new cycle fails the test.
KNOWN_CYCLES: set[frozenset[str]] = set()

# The package's own entry points (the SCons tool, microbuild.api, microbuild.connect) import
# above every layer, when called only: `import microbuild` for __version__ loads none of them.
FACADE = {("microbuild", "microbuild.api"), ("microbuild", "microbuild.firmware.scons_tool")}


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint_imports), "--no-cache", "--no-logo", ".importlinter"],
                         cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def _cycles(graph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(n for n in graph.find_modules_directly_imported_by(m)
                       if (m, n) not in FACADE) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_cycles():
    # Imports under `if TYPE_CHECKING:` never run, so they make no cycle.
    graph = grimp.build_graph("microbuild", exclude_type_checking_imports=True, cache_dir=None)
    new = [sorted(c) for c in _cycles(graph) if c not in KNOWN_CYCLES]
    assert not new, f"modules importing each other in a circle: {new}"


def test_the_cycle_finder_finds_a_cycle():
    """The check can fail: two modules importing each other are one cycle, a third one importing
    them both is not part of it."""
    class Graph:
        modules = {"a", "b", "c"}
        imports = {"a": {"b"}, "b": {"a"}, "c": {"a", "b"}}

        def find_modules_directly_imported_by(self, module):
            return self.imports[module]

    assert _cycles(Graph()) == [frozenset({"a", "b"})]
