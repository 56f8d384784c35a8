"""What compiling one model gives: its C sources, I/O specs, memory plan and the summary the
build, the RPC table and the reports read (``compile_model`` in codegen.py makes it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from microbuild.compiler.op_stats import live_bytes
from microbuild.compiler.planner import MemoryPlan
from microbuild.compiler.plan_check import plan_svg
from microbuild.compiler.variants import BoundLowering, Target
from microbuild.compiler.workspace_split import describe_parts
from microbuild.model.ir import Graph


@dataclass
class TensorSpec:
    """One graph input or output as the caller sees it."""

    name: str
    tensor: int  # tensor index in the graph
    shape: tuple[int, ...]
    dtype: str
    scale: float  # 0.0 when not quantized (float I/O)
    zero_point: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tensor": self.tensor, "shape": list(self.shape),
                "dtype": self.dtype, "scale": self.scale, "zero_point": self.zero_point,
                "bytes": self.bytes}


@dataclass
class CompiledModel:
    graph: Graph
    plan: MemoryPlan
    prefix: str
    sources: dict[str, str]  # file name -> C text
    kernel_sources: list[str]  # paths relative to runtime_dir, e.g. "kernels/softmax.c"
    runtime_dir: Path
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    workspace_bytes: int
    weights_bytes: int
    ops: list[dict[str, Any]] = field(default_factory=list)
    # Bytes of state kept between invocations (variable tensors); 0 for a stateless model, whose
    # functions then take no state pointer.
    state_bytes: int = 0
    target: Target = field(default_factory=Target)  # the CPU the variants were chosen for
    lowerings: list[BoundLowering] = field(default_factory=list)  # per op, with its kernel
    # Per op, the C statement(s) that run it, as in <prefix>_run_op (the model blob packer,
    # microbuild/blob/, turns each kernel call into an op table entry).
    op_code: list[str] = field(default_factory=list)

    @property
    def include_dirs(self) -> list[Path]:
        """Header directories needed to compile the sources (besides the output directory)."""
        return [self.runtime_dir / "include"]

    def summary(self) -> dict[str, Any]:
        """A JSON-able description: sizes, operators, I/O and the memory plan."""
        return {
            "prefix": self.prefix,
            "workspace_bytes": self.workspace_bytes,
            "weights_bytes": self.weights_bytes,
            "state_bytes": self.state_bytes,
            "state": self.state_tensors(),
            "inputs": [s.to_dict() for s in self.inputs],
            "outputs": [s.to_dict() for s in self.outputs],
            "ops": self._ops_with_live_bytes(),
            "kernel_sources": self.kernel_sources,
            "target": self.target.to_dict(),
            "notes": list(self.graph.notes),
            # A row-streamed region (row_stream.py): its ops, row buffers, and the workspace
            # op-by-op execution would need.
            "row_stream": (None if self.plan.row_region is None else
                           {**self.plan.row_region.summary(),
                            "workspace_bytes_op_by_op": self.plan.op_by_op_bytes}),
            "workspace_bytes_op_by_op": (self.plan.op_by_op_bytes
                                         if self.plan.op_by_op_bytes is not None
                                         else self.plan.workspace_bytes),
            "plan": {"strategy": self.plan.strategy, "buffers": self.plan.summary(),
                     # outputs written over the inputs they consume (microbuild/compiler/overlap.py)
                     "overlaps": [{"op": op, "input": src, "output": dst, "distance": d,
                                   "pixel_bytes": px}
                                  for op, src, dst, d, px in self.plan.overlaps]},
            # A workspace split across memory regions (compiler/workspace_split.py): each
            # part's region, bytes, array and buffers; absent when the workspace is one.
            **({"workspace_parts": describe_parts(self.plan, self.prefix)}
               if self.plan.regions else {}),
        }

    def _ops_with_live_bytes(self) -> list[dict[str, Any]]:
        """The ops, each with the workspace bytes live while it runs (from the memory plan)."""
        live = live_bytes(self.plan.summary(), len(self.ops))
        return [{**op, "live_bytes": live[op["index"]] if op["index"] < len(live) else 0}
                for op in self.ops]

    def state_tensors(self) -> list[dict[str, Any]]:
        """Each variable tensor's place in the state buffer and the byte ``<prefix>_reset`` fills
        it with (TFLM's ResetVariableTensors: an int8 tensor's zero point, else 0), or, for a
        variable with a starting value (a resource variable), those bytes in hex ("initial")."""
        entries = []
        for t, loc in sorted(self.plan.state_locations.items(), key=lambda item: item[1].offset):
            tensor = self.graph.tensors[t]
            entry = {"tensor": t, "name": tensor.name, "offset": loc.offset,
                     "bytes": tensor.nbytes, "fill": reset_fill(tensor)}
            if tensor.initial is not None:
                entry["initial"] = np.ascontiguousarray(
                    tensor.initial, dtype=np.dtype(tensor.dtype).newbyteorder("<")).tobytes().hex()
            entries.append(entry)
        return entries

    def summary_json(self) -> str:
        return json.dumps(self.summary(), indent=2)

    def write(self, out_dir: str | Path, include_runtime: bool = False) -> list[Path]:
        """Write the generated files into ``out_dir``; with ``include_runtime`` also copy the
        kernels this model needs and the runtime headers (a self-contained source tree)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in self.sources.items():
            path = out / name
            path.write_text(text)
            written.append(path)
        if include_runtime:
            files = list(self.kernel_sources)
            files += [str(p.relative_to(self.runtime_dir))
                      for p in sorted((self.runtime_dir / "include").rglob("*.h"))]
            for rel in files:
                dst = out / "runtime" / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes((self.runtime_dir / rel).read_bytes())
                written.append(dst)
        return written

    def plan_svg(self) -> str:
        return plan_svg(self.plan.flattened(), self.graph)  # a split plan: parts end to end


def reset_fill(tensor) -> int:
    """The byte TFLM's ResetVariableTensors writes over a variable tensor: an int8 tensor's zero
    point (its real 0.0), anything else 0."""
    if tensor.dtype == "int8" and tensor.quant is not None:
        return int(tensor.zero_point) & 0xFF
    return 0
