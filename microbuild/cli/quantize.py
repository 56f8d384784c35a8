"""`microbuild quantize`: a float .tflite and a calibration set in, a full-integer .tflite out
(ai-edge-quantizer), what it did per operator, and then the new model validated on the host
board against the float one (accuracy of both with --labels)."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.validate import render_report


def render_changes(result) -> None:
    out.print(f"{result.float_model} ({result.float_bytes:,} B) -> {result.model} "
              f"({result.model_bytes:,} B): {result.activations} activations, int8 weights "
              f"{result.weights}, calibrated on {result.calibration_samples:,} samples")
    table = Table()
    for heading in ("#", "operator", "float model", "quantized"):
        table.add_column(heading, justify="right" if heading == "#" else "left")
    for op in result.ops:
        table.add_row(str(op.index), op.opcode, op.before, op.after)
    out.print(table)


def cmd_quantize(args: argparse.Namespace) -> int:
    result = api.quantize(args.float_model, args.data, args.output,
                          int16_activations=args.int16_activations, per_tensor=args.per_tensor,
                          limit=args.limit, seed=args.seed, preprocess=args.preprocess)
    doc = {"quantize": result.to_dict()}
    if not args.json:
        render_changes(result)
    if not args.no_validate:
        if not args.json:
            err.print("validating the quantized model on the host board against the float "
                      "one...")
        report = api.validate("host", result.model, args.validate_data or args.data,
                              labels=args.labels, float_model=result.float_model,
                              limit=args.limit, seed=args.seed, preprocess=args.preprocess,
                              out_dir=args.out_dir)
        doc["validate"] = report.to_dict()
        if not args.json:
            render_report(doc["validate"])
    if args.json:
        print(json.dumps(doc, indent=2, default=lambda v: None))
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("quantize", help="quantize a float .tflite to int8 (or int16x8) "
                                             "with a calibration set, then validate it")
    p.add_argument("float_model", metavar="F.tflite", help="the float model")
    p.add_argument("--data", required=True,
                   help="calibration set, in any form `validate --data` reads (float samples)")
    p.add_argument("-o", "--output", required=True, metavar="M.tflite",
                   help="where to write the quantized model")
    p.add_argument("--int16-activations", action="store_true",
                   help="int16 activations with int8 weights (TFLM's int16x8) instead of int8")
    p.add_argument("--per-tensor", action="store_true",
                   help="one weight scale per tensor instead of one per output channel")
    p.add_argument("--labels", help="labels of the validation data: accuracy of both models")
    p.add_argument("--validate-data", metavar="D",
                   help="validate on this dataset instead of the calibration set")
    p.add_argument("--no-validate", action="store_true",
                   help="only quantize; do not build and run it on the host board")
    p.add_argument("--preprocess", metavar="MODULE:FUNCTION",
                   help="read each data file with your function(path, input_specs) -> arrays")
    p.add_argument("--limit", type=int, help="a seeded random subset of N samples")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit's subset (default: 0)")
    p.add_argument("--out-dir", help="build folder of the host firmware (default: build/)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=cmd_quantize)
