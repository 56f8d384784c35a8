"""The compiler's pipeline for one model: read the .tflite, prepare and check the graph, fuse,
choose each op's kernel variant, plan the memory (row streaming, workspace split), then let
the emitter (emitter.py) write the C sources. ``compile_model`` is the entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from microbuild.compiler.c_names import is_c_identifier
from microbuild.compiler.compiled_model import CompiledModel, TensorSpec
from microbuild.compiler.emitter import ModelEmitter
from microbuild.compiler.fusion import fuse_conv_add
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.planner import plan_memory, plan_with_streaming
from microbuild.compiler.prepare import prepare_graph
from microbuild.compiler.validate import check_graph
from microbuild.compiler.variants import Selection, bind
from microbuild.compiler.workspace_split import WorkspaceRegion, needs_split, split_plan
from microbuild.errors import ModelError
from microbuild.model.ir import Graph
from microbuild.model.reader import read_model

__all__ = ["CompiledModel", "TensorSpec", "compile_model", "lowered_graph"]


def lowered_graph(model: str | Path | bytes | Graph) -> Graph:
    """The graph whose ops compile_model lowers, numbered as the generated code numbers them:
    prepared (static shapes, folding, rewrites; microbuild/compiler/prepare.py), checked, and
    CONV_2D+ADD fused. Whatever chooses kernels per op (the tuner) must see this graph."""
    graph = model if isinstance(model, Graph) else read_model(model)
    graph = prepare_graph(graph)
    check_graph(graph)
    return fuse_conv_add(graph)


def compile_model(model: str | Path | bytes | Graph, prefix: str = "model",
                  selection: Selection | None = None, row_stream: bool = True,
                  workspace_regions: Sequence[WorkspaceRegion] | None = None) -> CompiledModel:
    """Compile a .tflite model (path, bytes or an already read Graph) to C sources.

    ``selection`` chooses each op's kernel variant: the board's CPU, a tuning log, forced
    choices (microbuild.compiler.variants). Without one: the heuristic defaults for a generic
    CPU (portable C variants only). ``row_stream``: run a run of convolutions row by row when
    that needs a smaller workspace (microbuild/compiler/row_stream.py); False (or a selection's
    ``row_stream`` False) keeps every op whole.

    ``workspace_regions``: the memory regions the board lists for the workspace, in order of
    preference, with the bytes free in each: a workspace larger than the first is split across
    them (microbuild/compiler/workspace_split.py); one that fits is planned as without them."""
    if not is_c_identifier(prefix):
        raise ModelError(f"prefix {prefix!r} is not a valid C identifier; use letters, digits and "
                         "underscores, not starting with a digit (e.g. 'kws')")
    graph = lowered_graph(model)
    selection = selection if selection is not None else Selection()
    lowerings = bind(graph, [REGISTRY[op.opcode] for op in graph.operators], selection)
    regions = workspace_regions or ()
    plan = plan_memory(graph, lowerings)
    if row_stream and selection.row_stream:
        streamed = plan_with_streaming(graph, lowerings, plan)
        # Streaming is kept when its workspace fits the first region; one that must be split
        # across regions anyway is the op-by-op plan, split (row buffers live in one workspace).
        if streamed.row_region is None or not needs_split(streamed, regions):
            plan = streamed
    plan = split_plan(plan, graph, regions, prefix)
    compiled = ModelEmitter(graph, lowerings, plan, prefix).run()
    compiled.target = selection.target
    compiled.lowerings = lowerings
    return compiled
