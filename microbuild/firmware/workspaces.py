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

from microbuild.boards import format_size
from microbuild.compiler.workspace_split import WorkspaceRegion
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
    # Models whose workspace is split across memory regions (compiler/workspace_split.py): per
    # model, each part's region, bytes and buffers, for the report ("bytes" above is the first).
    for entry in entries:
        split = {p: by_prefix[p]["workspace_parts"] for p in entry["models"]
                 if by_prefix[p].get("workspace_parts")}
        if split:
            entry["split"] = split
    return entries


# Bytes kept free for .data and .bss in a workspace region that also holds them, when a workspace
# is split: their sizes are known only after the link, the split is decided before it. An AOT
# firmware's .data + .bss is 8 bytes on mps2-an500 (measured); an application's own globals may be
# more, and then the fit check after the link says which region is over and by how much.
DATA_RESERVE = 1024


def split_regions(board) -> list[WorkspaceRegion] | None:
    """The regions the board lists for the workspace, each with the bytes a model's workspace may
    take there (its length minus the stack, heap and a .data/.bss reserve placed in it), for the
    compiler to split a workspace larger than the first (compiler/workspace_split.py); None when
    the board names one region (nothing is split, the plan is as it always was)."""
    names = board.workspace_regions
    if len(names) < 2:
        return None
    place = board.placement
    regions = []
    for name in names:
        region = board.regions[name]
        free, minus = region.length, []
        for kind, size in (("stack", board.stack_size), ("heap", board.heap_size)):
            if place.get(kind) == name and size:
                free -= size
                minus.append(f"{format_size(size)} {kind}")
        if name in (place.get("data"), place.get("bss")):
            free -= DATA_RESERVE
            minus.append(f"{format_size(DATA_RESERVE)} kept for .data/.bss")
        counted = f"{format_size(region.length)}" + (f" minus {', '.join(minus)}" if minus else "")
        regions.append(WorkspaceRegion(name, max(free, 0), place.get("state") == name, counted))
    return regions


def split_spec(board) -> str:
    """split_regions() as the JSON the SCons MicroModel builder takes
    (MICROBUILD_WORKSPACE_REGIONS); "" for a board naming one region."""
    import json

    regions = split_regions(board)
    return json.dumps([r.to_dict() for r in regions]) if regions else ""


def refuse_split_for_rpc(board: str, models: Sequence[dict[str, Any]]) -> None:
    """The RPC executor keeps every workspace in one arena and the host addresses tensors as
    offsets in it (docs/rpc-protocol.md): a model whose workspace was split across memory
    regions (its summary has ``workspace_parts``) cannot be served. A board that lists several
    regions is fine for RPC as long as every workspace fits the first."""
    for m in models:
        parts = m.get("workspace_parts")
        if parts:
            regions = ", ".join(p["region"] for p in parts)
            raise MicrobuildError(
                f"model '{m['prefix']}': its workspace is split across {regions} (board {board} "
                f"lists several regions for the workspace and it does not fit the first), but "
                f"the RPC executor keeps its models' workspaces in one arena whose offsets the "
                f"host reads and writes, so it cannot serve a split one. Build with the aot or "
                f"app executor, or for RPC use a board file whose first workspace region holds "
                f"the whole workspace ({parts[0]['region']} holds {parts[0]['bytes']:,} bytes "
                f"of it here)")
