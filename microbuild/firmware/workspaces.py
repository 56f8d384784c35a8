"""Several models in one firmware, one workspace.

A firmware's executors run its models one after another (runtime/aot/main.c runs each model,
prints its outputs and goes on to the next; an RPC host runs one model at a time and reads its
outputs before the next request). Models that never run at the same time need no workspace each:
they share one, the size of the largest. A model whose workspace must survive the others' runs
(the host reads its outputs later, or an application interleaves models) is built with a
workspace of its own: ``separate`` names those models by prefix.

A model's *state* (variable tensors) is never shared: it must survive between runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Sequence

from microbuild.errors import MicrobuildError

# The one shared workspace array of an AOT firmware (a model's own is mb_aot_workspace_<prefix>).
SHARED_SYMBOL = "mb_aot_shared_workspace"


@dataclass(frozen=True)
class WorkspaceGroups:
    """Which models share the one workspace and which have their own."""

    shared: tuple[str, ...]  # prefixes, in firmware order; empty or at least two
    separate: tuple[str, ...]  # prefixes with a workspace of their own

    def shares(self, prefix: str) -> bool:
        return prefix in self.shared


def workspace_groups(models: Sequence[dict[str, Any]],
                     separate: Collection[str] | bool = ()) -> WorkspaceGroups:
    """Group the models (compiler summaries, in firmware order). ``separate``: prefixes that keep
    a workspace of their own, or True for every model (no sharing). One model left to share has
    nothing to share with, and keeps its own."""
    prefixes = [m["prefix"] for m in models]
    if separate is True:
        own = set(prefixes)
    else:
        own = set(separate or ())
        unknown = sorted(own - set(prefixes))
        if unknown:
            raise MicrobuildError(
                f"separate workspace for {', '.join(unknown)}: the firmware has no such model; "
                f"its models are: {', '.join(prefixes)}")
    shared = [p for p in prefixes if p not in own]
    if len(shared) < 2:
        shared = []
    return WorkspaceGroups(tuple(shared), tuple(p for p in prefixes if p not in shared))


def check_separate(prefixes: Sequence[str], separate: Collection[str] | bool) -> None:
    """A clear error, before anything is built, for a ``separate`` naming no model."""
    workspace_groups([{"prefix": p} for p in prefixes], separate)


def describe(models: Sequence[dict[str, Any]], groups: WorkspaceGroups) -> list[dict[str, Any]]:
    """The firmware's workspaces for the fit report: one entry per workspace array, with the
    models using it and its bytes (the shared one: the largest of its models')."""
    by_prefix = {m["prefix"]: m for m in models}
    entries = []
    if groups.shared:
        entries.append({"models": list(groups.shared), "shared": True,
                        "bytes": max(by_prefix[p]["workspace_bytes"] for p in groups.shared),
                        "separate_bytes": sum(by_prefix[p]["workspace_bytes"]
                                              for p in groups.shared)})
    for p in groups.separate:
        entries.append({"models": [p], "shared": False,
                        "bytes": by_prefix[p]["workspace_bytes"]})
    return entries
