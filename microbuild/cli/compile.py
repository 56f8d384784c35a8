"""`microbuild compile`: a model to C, with the table of operators and kernels."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from microbuild.cli.console import out
from microbuild.cli.kernel_options import (add_kernel_arguments, kernel_options,
                                           measure_float_reorder)
from microbuild.units import kib


def cmd_compile(args: argparse.Namespace) -> int:
    from microbuild.boards import resolve_board
    from microbuild.compiler.c_names import model_prefix
    from microbuild.compiler import compile_model
    from microbuild.compiler.variants import Selection, Target
    from microbuild.tuning import TuningLog

    from microbuild.firmware.workspaces import split_regions

    options = kernel_options(args)
    board = resolve_board(args.board) if args.board else None
    target = Target.of_board(board) if board is not None else Target()
    tuning = TuningLog.load(options["tuning"]) if "tuning" in options else None
    selection = Selection(target, tuning=tuning, force=options.get("variants", {}))
    # With a board that lists several workspace regions, the workspace is split as a build
    # for that board splits it.
    # Without --prefix, the prefix comes from the file name, as build and generate derive it.
    prefix = args.prefix or model_prefix(args.model)
    compiled = compile_model(Path(args.model), prefix=prefix, selection=selection,
                             workspace_regions=split_regions(board) if board else None,
                             row_stream=not args.no_row_stream)
    written = compiled.write(Path(args.output))
    if args.plan_svg:
        Path(args.plan_svg).write_text(compiled.plan_svg(), encoding="utf-8")
    summary = compiled.summary()
    if args.json:
        reorder = measure_float_reorder(args, board, options, summary, args.model)
        if reorder is not None:
            summary["float_reorder"] = reorder.to_dict()
        print(json.dumps(summary, indent=2))
        return 0
    table = Table(title=f"{args.model}: {len(summary['ops'])} operators", title_justify="left")
    # "#" is the operator's place in the generated code (what --variant N and profiles use);
    # "model op" is its index in the .tflite file, shown when folding or fusion moved them apart.
    renumbered = any(op["index"] != op["model_index"] for op in summary["ops"])
    columns = ["#"] + (["model op"] if renumbered else []) + \
        ["operator", "input shapes", "output shapes", "MACs", f"kernel ({target.cpu})",
         "live"]
    for column in columns:
        table.add_column(column, justify="right" if column in ("#", "MACs", "live") else "left")
    for op in summary["ops"]:
        model_op = [", ".join(map(str, op.get("fused_from", [op["model_index"]])))] \
            if renumbered else []
        table.add_row(str(op["index"]), *model_op, op["opcode"],
                      shapes_text(op["input_shapes"]), shapes_text(op["output_shapes"]),
                      f"{op['macs']:,}" if op["macs"] else "",
                      f"{op['kernel']} ({op['kernel_choice']})", kib(op["live_bytes"]))
    out.print(table)
    out.print(f"MACs per inference: {sum(op['macs'] for op in summary['ops']):,}   live: "
              "workspace bytes in use while the operator runs (its tensors and scratch)")
    for note in summary["notes"]:
        out.print(f"note: {note}")
    for op in summary["ops"]:  # no silent fallback: say why a fast kernel did not take an op
        if op["kernel"] == "reference" and op.get("variants_refused"):
            by_reason: dict[str, list[str]] = {}
            for name, why in op["variants_refused"].items():
                by_reason.setdefault(why, []).append(name)
            reasons = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
            out.print(f"op {op['index']} {op['opcode']} runs the reference kernel on "
                      f"{target.cpu}: {reasons}")
    for kind in ("inputs", "outputs"):
        for i, t in enumerate(summary[kind]):
            out.print(f"{kind[:-1]} {i}: {t['dtype']}{list(t['shape'])} scale={t['scale']:.6g} "
                      f"zero_point={t['zero_point']}")
    parts = summary.get("workspace_parts")
    workspace = (" + ".join(f"{p['bytes']:,} bytes in {p['region']}" for p in parts) if parts
                 else f"{summary['workspace_bytes']:,} bytes")  # split across the board's regions
    out.print(f"weights: {summary['weights_bytes']:,} bytes   workspace: {workspace}")
    stream = summary["row_stream"]
    if stream:
        first, last = stream["ops"]
        buffers = ", ".join(f"t{b['tensor']} {b['rows']} rows ({b['bytes']:,} B)"
                            for b in stream["row_buffers"])
        out.print(f"ops {first}-{last} run row by row ({stream['calls']} band calls, "
                  f"{stream['row_moves']} row moves; row buffers {buffers}): "
                  f"{summary['workspace_bytes']:,} bytes instead of "
                  f"{stream['workspace_bytes_op_by_op']:,} op by op (--no-row-stream)")
    out.print("wrote " + ", ".join(str(p) for p in written))
    measure_float_reorder(args, board, options, summary, args.model)
    if args.plan_svg:
        out.print(f"memory plan drawn in {args.plan_svg}")
    return 0


def shapes_text(shapes) -> str:
    """[[1, 49, 10, 1], [64, 10, 4, 1], None] -> "1x49x10x1, 64x10x4x1, -" (None: no tensor)."""
    return ", ".join("x".join(map(str, s)) if s else ("-" if s is None else "scalar")
                     for s in shapes)


def add_parser(commands) -> None:
    p = commands.add_parser("compile", help="compile an int8 .tflite model to C")
    p.add_argument("model", help="the .tflite file")
    p.add_argument("-o", "--output", default="out", help="folder for the generated C (default: out)")
    p.add_argument("--prefix", help="prefix of every generated symbol and file name (default: "
                                    "from the model's file name, as build and generate do: "
                                    "ds_cnn.tflite -> ds_cnn)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--plan-svg", metavar="FILE", help="draw the memory plan as an SVG picture")
    p.add_argument("--no-row-stream", action="store_true",
                   help="run every operator whole, even where running the first convolutions "
                        "row by row would need a smaller workspace")
    p.add_argument("--board", help="choose kernel variants for this board's CPU (default: "
                                   "portable C only)")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_compile)
