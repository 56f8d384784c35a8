"""Every kernel variant, on the CPUs it is for, equals TFLM bit for bit.

One RPC firmware per emulated board holds every sweep model that has an operator with variants,
once per variant the board's CPU can run (plus once with the reference kernels): Cortex-M3 (portable
C only), Cortex-M4 and M7 (+ Arm DSP), Cortex-M55 (+ DSP and Helium), RV32. The host drives each
copy over RPC on seeded random inputs and compares with TFLM. One build per board keeps it to a
few minutes; pytest-xdist spreads the boards over the cores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.compiler import lowered_graph
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.variants import REFERENCE, Target
from microbuild.errors import FitError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import differences_on_device  # noqa: E402

SWEEP = sorted((Path(__file__).resolve().parent.parent / "models" / "ops").glob("*.tflite"))
BOARDS = ["mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547", "riscv32-virt",
          "mps2-an386@-O0 -DMB_CONV2D_DSP_C_BLOCKS"]
INPUT_SETS = 3


def _board(board: str, tmp_path: Path) -> str:
    """A board name, or for "name@FLAGS" a board file extending it compiled with those flags:
    an unoptimised build (a debug build of a generated project) takes the variants' C paths
    instead of their inline assembly, and MB_CONV2D_DSP_C_BLOCKS the C form of the assembly
    loops of conv2d_dsp.c and depthwise_conv2d_dsp.c (what a DSP core in Arm state compiles)."""
    if "@" not in board:
        return board
    base, flags = board.split("@")
    path = tmp_path / f"{base}-debug.yaml"
    path.write_text(f"name: {base}-debug\nextends: {base}\ntoolchain:\n"
                    f"  cflags: [{', '.join(flags.split())}]\n")
    return str(path)


def _instances(board: str) -> dict[str, tuple[Path, int, str, str]]:
    """prefix -> (sweep model, op index, opcode, variant) for every op with variants in the
    sweep and every variant of it legal on the board's CPU."""
    target = Target.of_board(load_board(board))
    found: dict[str, tuple[Path, int, str, str]] = {}
    for path in SWEEP:
        try:  # the graph as compile_model lowers it (op indices as the firmware numbers them)
            graph = lowered_graph(path)
        except Exception:  # the sweep holds a few models microbuild refuses on purpose
            continue
        for op in graph.operators:
            lowering = REGISTRY.get(op.opcode)
            if lowering is None or not lowering.variants:
                continue
            if any(t >= 0 and graph.tensors[t].dtype == "float32" for t in op.inputs):
                # Variants are integer kernels; a float32 instance runs its one float kernel,
                # compared on Arm with TFLM built for Arm (test_float_sweep_qemu.py), since
                # the FPU cores' fused multiply-adds differ from x86 TFLM-Python's.
                continue
            kop = lowering.kernel_op(op)
            names = [REFERENCE] + [v.name for v in lowering.variants
                                   if v.features <= target.features and v.accepts_op(kop, graph)]
            for name in names:
                found[f"{path.stem}__op{op.index}__{name}"] = (path, op.index, kop.opcode, name)
    return found


@pytest.mark.parametrize("board", BOARDS)
def test_every_variant_is_bit_exact_on_the_board(board, tmp_path):
    board_name, board = board, _board(board, tmp_path)
    instances = _instances(board)
    target = Target.of_board(load_board(board))
    # Variants that reorder float sums are not bit-exact by design and are only built with
    # --allow-float-reorder: tests/compiler/test_float_reorder.py measures them instead.
    legal = {(v.opcode, v.name) for lowering in REGISTRY.values() for v in lowering.variants
             if v.features <= target.features and not v.reorders_float_sums}
    built = {(opcode, name) for _, _, opcode, name in instances.values() if name != REFERENCE}
    assert built == legal, f"variants legal on {board} but exercised by no sweep model: " \
                           f"{sorted(legal - built)}"
    # A firmware's model table holds 255 models: the boards with the most variants get several.
    # A chunk whose copies do not fit the board's flash is built as two halves instead (only the
    # link is redone: the compiled objects come from the suite's object cache).
    prefixes = list(instances)
    pending = [prefixes[i:i + 150] for i in range(0, len(prefixes), 150)]
    expected: dict[Path, list] = {}
    problems = []
    symbols: set[str] = set()
    n = 0
    while pending:
        chunk = pending.pop(0)
        n += 1
        try:  # each copy: its op on the variant, every other op on the reference
            build = api.build_firmware(
                board, {p: str(instances[p][0]) for p in chunk}, tmp_path / f"fw{n}",
                executor="rpc", model_variants={p: {"*": REFERENCE, str(instances[p][1]):
                                                    instances[p][3]} for p in chunk})
        except FitError:
            assert len(chunk) > 1, f"{chunk[0]} alone does not fit {board}"
            pending[:0] = [chunk[:len(chunk) // 2], chunk[len(chunk) // 2:]]
            continue
        for m in build.models:
            _, index, _, name = instances[m["prefix"]]
            assert m["ops"][index]["kernel"] == name, (m["prefix"], m["ops"][index])
        if "MB_CONV2D_DSP_C_BLOCKS" in board_name:
            symbols |= set(subprocess.run(["arm-none-eabi-nm", str(build.elf)],
                                          capture_output=True, text=True,
                                          check=True).stdout.split())
        with api.connect(board, build, timeout=10) as dev:
            for prefix in chunk:
                path, _, opcode, name = instances[prefix]
                problems += differences_on_device(dev, prefix, path, INPUT_SETS, seed=5,
                                                  label=f"{path.name} {opcode}={name}",
                                                  tflm_outputs=expected)
    assert not problems, f"{board}:\n" + "\n".join(problems)
    if "MB_CONV2D_DSP_C_BLOCKS" in board_name:  # the C forms of the assembly loops are what ran
        assert {"block_c", "dw_row3_c", "fc_groups_c"} <= symbols
