"""`microbuild validate`: a dataset through the model as it runs on the board, against TFLM,
the float model and the labels; a terminal table, --json, or an --html page."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn,
                           TextColumn, TimeRemainingColumn)
from rich.table import Table

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.shared import build_incrementally, choose_firmware
from microbuild.cli.kernel_options import add_kernel_arguments
from microbuild.errors import MicrobuildError
from microbuild.manifest import apply_manifest, require


def _percent(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _number(value, digits: int = 4) -> str:
    if value is None:
        return "–"
    return "∞" if isinstance(value, float) and math.isinf(value) else f"{value:.{digits}g}"


def render_report(doc: dict) -> None:
    """The report as terminal tables."""
    ran = doc["ran"]
    colour = "green" if doc["identical_to_tflm"] == ran and ran else "red"
    out.print(f"[bold {colour}]{doc['identical_to_tflm']:,} of {ran:,}[/] samples identical to "
              f"TFLM ({doc['model']} on {doc['board']}, data {escape(doc['data'])})")
    if doc["interrupted"]:
        out.print(f"[yellow]interrupted: {ran:,} of {doc['samples']:,} samples ran[/]")
    for failure in doc["failures"]:
        out.print(f"[red]sample {failure['index']} ({escape(failure['name'])}) failed on the "
                  f"device:[/] {escape(failure['message'])}")
    if doc["differing_from_tflm"]:
        shown = ", ".join(str(i) for i in doc["differing_from_tflm"][:20])
        out.print(f"[red]samples that differ from TFLM:[/] {shown}")
    latency = doc["latency"]
    if latency:
        # Titles on lines of their own: a table title is cut to the table's width.
        out.print("latency per inference")
        table = Table()
        for heading in ("", "ticks", latency["unit"]):
            table.add_column(heading, justify="right")
        for k in ("min", "median", "max"):
            table.add_row(k, f"{latency[f'{k}_ticks']:,}", latency["shown"][k])
        out.print(table)
    if doc["vs_float"]:
        out.print(f"against the float model {doc['float_model']}")
        table = Table()
        for heading in ("output", "top-1 agreement", "mean |err|", "max |err|", "RMSE",
                        "cosine", "SNR dB"):
            table.add_column(heading, justify="right")
        for o in doc["vs_float"]:
            table.add_row(f"{o['output']} {o['name']}", _percent(o["top1_agreement"]),
                          _number(o["mean_abs_error"]), _number(o["max_abs_error"]),
                          _number(o["rmse"]), _number(o["cosine"], 6), _number(o["snr_db"]))
        out.print(table)
    labels = doc["vs_labels"]
    if labels:
        out.print(f"against the labels ({labels['samples']:,} samples)")
        table = Table()
        table.add_column("model")
        table.add_column("accuracy", justify="right")
        table.add_row("deployed", _percent(labels["deployed_accuracy"]))
        if labels["float_accuracy"] is not None:
            table.add_row("float", _percent(labels["float_accuracy"]))
        out.print(table)
        out.print("confusion matrix (rows: label, columns: prediction)")
        matrix = Table()
        matrix.add_column("")
        for k in range(len(labels["confusion"])):
            matrix.add_column(str(k), justify="right")
        for name, row in zip(labels["classes"], labels["confusion"]):
            matrix.add_row(name, *(str(c) for c in row))
        out.print(matrix)
    totals = (doc["memory"] or {}).get("totals", {})
    if totals:
        out.print("memory: " + "  ".join(f"{k} {v:,} B" for k, v in totals.items() if v))
        for r in doc["memory"].get("regions", []):
            out.print(f"  {r['name']}: {r['used']:,} of {r['length']:,} B ({r['percent']}%)")
    if doc["samples_per_second"]:
        out.print(f"{doc['samples_per_second']:.1f} samples/s over the link "
                  f"({doc['link'].get('requests', 0):,} requests, "
                  f"{doc['link'].get('retransmissions', 0)} retransmitted)")


def cmd_validate(args: argparse.Namespace) -> int:
    apply_manifest(args, executor_default="rpc")
    require(args, "board")
    if not args.model:
        raise MicrobuildError("say which model to validate: --model M.tflite (or microbuild.yaml's)")
    if len(args.model) != 1:
        raise MicrobuildError(f"validate takes one model; {len(args.model)} given "
                              f"({', '.join(args.model)})")
    if args.html and not args.html.endswith((".html", ".htm")):
        raise MicrobuildError(f"--html {args.html}: name the page .html")
    args.executor = "rpc"

    show = not args.json
    progress = Progress(TextColumn("validating"), BarColumn(), MofNCompleteColumn(),
                        TaskProgressColumn(), TextColumn("{task.fields[rate]}"),
                        TimeRemainingColumn(), console=err, disable=not show or
                        not err.is_terminal)
    task = None

    def advance(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            task = progress.add_task("validate", total=total, rate="")
        elapsed = progress.tasks[task].elapsed or 0
        progress.update(task, completed=done,
                        rate=f"{done / elapsed:.1f} samples/s" if elapsed else "")

    def log(line: str) -> None:
        if show:
            err.print(f"[dim]device:[/] {escape(line)}", highlight=False)

    def firmware():
        """--firmware F (an RPC build with the model), else the model built now."""
        from microbuild.boards import resolve_board

        if not args.firmware:
            # Its own build folder and board (an emulated Arm board's console on semihosting,
            # microbuild.validate.run.validation_board): `build --executor rpc`'s stays as it is.
            from microbuild.manifest import default_out_dir
            from microbuild.validate.run import validation_board

            folder = Path(args.out_dir or default_out_dir(args.board, "validate"))
            given = resolve_board(args.board)
            board = validation_board(given, folder)
            chosen = args.board if board is given else str(board.files[0])
            return build_incrementally(argparse.Namespace(**{**vars(args), "out_dir": folder,
                                                             "board": chosen}), "rpc", None)

        chosen = choose_firmware(args, resolve_board(args.board))
        chosen.check_board(False)
        if chosen.build is None or chosen.build.executor != "rpc":
            raise MicrobuildError(f"--firmware {args.firmware}: not an RPC firmware built by "
                                  "microbuild; drop --firmware to build one with the model")
        return chosen.build

    with progress:
        report = api.validate(
            args.board, args.model[0], args.data, labels=args.labels,
            float_model=args.float_model, limit=args.limit, seed=args.seed,
            preprocess=args.preprocess, max_samples=args.max_samples,
            firmware=firmware, runner=args.runner,
            port=args.port, timeout=args.timeout, flash=not args.no_flash, progress=advance,
            on_log=log)
    doc = report.to_dict()
    if args.html:
        from microbuild.validate.report import render_html

        Path(args.html).write_text(render_html(doc), encoding="utf-8")
    if args.json:
        print(json.dumps(doc, indent=2, default=lambda v: None))
    else:
        render_report(doc)
        if args.html:
            out.print(f"report written to {args.html}")
    if report.interrupted:
        return 130
    return 0 if report.identical == report.ran and not report.failures else 1


def add_parser(commands) -> None:
    p = commands.add_parser("validate", help="run a dataset through the model on the board and "
                                             "compare it with TFLM, the float model and labels")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--model", action="append", help="the deployed .tflite (int8/int16/float)")
    p.add_argument("--data", required=True,
                   help=".npz/.npy with samples on axis 0, or a folder of .npy, images or WAV "
                        "files (sub-folders: one class each, the labels)")
    p.add_argument("--labels", help="class index per sample: .npy or a text file, one per line")
    p.add_argument("--float", dest="float_model", metavar="F.tflite",
                   help="the float model: top-1 agreement, errors, SNR, its accuracy")
    p.add_argument("--preprocess", metavar="MODULE:FUNCTION",
                   help="read each data file with your function(path, input_specs) -> arrays")
    p.add_argument("--limit", type=int, help="a seeded random subset of N samples")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit's subset (default: 0)")
    p.add_argument("--max-samples", type=int, default=10_000,
                   help="refuse a bigger dataset unless --limit cuts it (default: 10000)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--firmware", help="an RPC firmware built by microbuild that has the model "
                                      "(default: built now)")
    p.add_argument("--runner", help="how to start or flash the board (default: its first)")
    p.add_argument("--port", help="real boards: serial port or HOST:PORT")
    p.add_argument("--no-flash", action="store_true",
                   help="real boards: use the firmware already on the board")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD-validate)")
    p.add_argument("--toolchain", help="one of the board's toolchain families")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each reply before resending (default: 10)")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_validate)
