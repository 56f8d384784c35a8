"""`microbuild build`: a firmware for a board, and with --run its outputs."""

from __future__ import annotations

import argparse
import json
import shlex

from microbuild import api
from microbuild.cli.console import err, out
from rich.table import Table

from microbuild.cli.shared import (build_incrementally, check_output_name, render_fit,
                                     render_result, run_app, save_outputs)
from microbuild.cli.shared import add_row_stream_argument, add_workspace_argument
from microbuild.cli.kernel_options import (add_kernel_arguments, kernel_options,
                                           measure_float_reorder)
from microbuild.errors import MicrobuildError
from microbuild.manifest import apply_manifest, default_out_dir, require


def cmd_build(args: argparse.Namespace) -> int:
    apply_manifest(args)
    if args.executor == "table":
        return _build_table(args)
    if args.executor == "rpc" and args.kernels_for:
        return _build_rpc_blob(args)
    if args.kernels_for:
        raise MicrobuildError("--kernels-for chooses a table firmware's kernels: add "
                              "--executor table (or --executor rpc, to upload blobs over RPC)")
    if args.blob_slot is not None:
        raise MicrobuildError("--blob-slot sizes the RAM slot of an RPC firmware that runs "
                              "uploaded blobs: add --executor rpc --kernels-for MODEL...")
    require(args, "board", "model")
    args.executor = args.executor or "aot"
    if args.output and not args.run:
        raise MicrobuildError("--output saves the outputs of a run: add --run")
    check_output_name(args.output)
    build = build_incrementally(args, args.executor, args.input)
    result = None
    if args.run and args.executor == "app":
        if args.json or args.output:
            raise MicrobuildError("--json and --output read the harness's output records: your "
                                  "own application (executor app) prints what it likes; use "
                                  "`microbuild run` to see it")
        render_fit(build)
        out.print(f"firmware: {build.elf}", soft_wrap=True)
        return run_app(build, None, args.timeout)
    if args.run:
        if not args.json and (build.board.is_host or build.board.is_emulated):
            err.print(f"running on {build.board.name}...")
        result = api.run_firmware(build, timeout=args.timeout)
        if args.output:
            save_outputs(args.output, build, result.outputs)
    if args.json:
        reorders = _measure_float_reorder(args, build)
        document = {"board": build.board.name, "toolchain": build.toolchain,
                    "executor": build.executor, "elf": str(build.elf),
                    "bin": str(build.binary) if build.binary else None,
                    "hex": str(build.hex) if build.hex else None,
                    "region_bins": {k: str(v) for k, v in build.region_binaries.items()},
                    "boot_images": [str(p) for p in build.boot_images],
                    "input": str(build.input_file) if build.input_file else None,
                    "size": build.size,
                    "models": [{k: m[k] for k in ("prefix", "model", "workspace_bytes",
                                                  "weights_bytes", "inputs", "outputs")}
                               for m in build.models]}
        if result is not None:
            document["run"] = result.to_dict()
        if any(reorders):
            document["float_reorder"] = [r.to_dict() for r in reorders if r is not None]
        print(json.dumps(document, indent=2))
        return 0
    render_fit(build)
    out.print(f"firmware: {build.elf}{build.files_note}", soft_wrap=True)
    if result is not None:
        render_result(result, build.board)
        if args.output:
            out.print(f"outputs saved to {args.output}")
    _measure_float_reorder(args, build)
    return 0


def _measure_float_reorder(args: argparse.Namespace, build) -> list:
    """With --allow-float-reorder: each model that runs a kernel reordering float sums, measured
    against the exact kernels (printed unless --json)."""
    if not getattr(args, "allow_float_reorder", False):
        return []
    options = kernel_options(args)
    return [measure_float_reorder(args, build.board, options, m, m["model"])
            for m in build.models]


def _build_table(args: argparse.Namespace) -> int:
    """--executor table: the kernels the --kernels-for models (else --model) call, with their
    code size; models are packed against it afterwards with `microbuild pack`."""
    require(args, "board")
    models = args.kernels_for or args.model
    out_dir = args.out_dir or default_out_dir(args.board, "table")
    firmware = api.build_table_firmware(args.board, models, out_dir, args.toolchain)
    rows = sorted(firmware.code_bytes.items())
    if args.json:
        print(json.dumps({"board": firmware.board.name, "executor": "table",
                          "elf": str(firmware.elf), "kernel_set": firmware.kernels.describe(),
                          "workspace_bytes": firmware.workspace_bytes,
                          "code_bytes": dict(rows)}, indent=2))
        return 0
    table = Table(title=f"kernel set {firmware.kernels.id:#010x}: "
                        f"{len(firmware.kernels.functions)} kernel functions")
    table.add_column("source")
    table.add_column("code bytes", justify="right")
    for name, size in rows:
        table.add_row(name, f"{size:,}")
    table.add_row("total", f"{sum(firmware.code_bytes.values()):,}")
    out.print(table)
    out.print(f"functions: {', '.join(firmware.kernels.functions)}", soft_wrap=True)
    out.print(f"workspace: {firmware.workspace_bytes:,} bytes")
    elf = shlex.quote(str(firmware.elf))  # a command to copy: paths with spaces stay whole
    # With two slots update must be told which (the one not running now): say so in the hint.
    slot = " --slot 0" if len(firmware.board.model_slots) > 1 else ""
    run = (f"run a blob: {elf} MODEL.mbm" if firmware.board.is_host else
           f"write a blob to a model slot: `microbuild update --board {firmware.board.name} "
           f"--firmware {elf} --blob M.mbm{slot}`")
    out.print(f"firmware: {firmware.elf} ({run}; pack one with "
              f"`microbuild pack --firmware {elf} --model M.tflite -o M.mbm`)",
              soft_wrap=True)
    return 0


def _build_rpc_blob(args: argparse.Namespace) -> int:
    """--executor rpc --kernels-for: an RPC firmware running the --kernels-for models, with their
    kernel set and a RAM slot for blobs the host uploads (`microbuild run --blob`)."""
    from microbuild.boards.sizes import parse_size
    from microbuild.firmware.rpc_blob import build_rpc_blob_firmware

    require(args, "board")
    if args.model:
        raise MicrobuildError("with --kernels-for the firmware's models are the --kernels-for "
                              "ones: drop --model")
    out_dir = args.out_dir or default_out_dir(args.board, "rpc")
    try:
        slot = None if args.blob_slot is None else parse_size(args.blob_slot)
    except (ValueError, TypeError) as err:
        raise MicrobuildError(f"--blob-slot {args.blob_slot}: {err}") from None
    build = build_rpc_blob_firmware(args.board, args.kernels_for, out_dir, slot, args.toolchain,
                                    args.jobs)
    slot = build.rpc_description["arena"]["arena_bytes"] - \
        build.rpc_description["arena"]["pool_offset"]
    if args.json:
        print(json.dumps({"board": build.board.name, "executor": "rpc", "elf": str(build.elf),
                          "blob_slot_bytes": slot, "size": build.size}, indent=2))
        return 0
    render_fit(build)
    elf = shlex.quote(str(build.elf))
    out.print(f"firmware: {build.elf} (RAM slot for blobs: {slot:,} bytes; pack one with "
              f"`microbuild pack --firmware {elf} --model M.tflite -o M.mbm`, run it with "
              f"`microbuild run --board {build.board.name} --firmware {elf} --blob M.mbm`)",
              soft_wrap=True)
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("build", help="build a firmware for a board (and run it with --run)")
    p.add_argument("--board", help="board name (see `microbuild boards list`) or a board YAML "
                                   "file (default: microbuild.yaml's)")
    p.add_argument("--model", action="append",
                   help=".tflite model (repeat for several models in one firmware; default: "
                        "microbuild.yaml's)")
    p.add_argument("--executor", choices=["aot", "rpc", "app", "table"],
                   help="aot (default): standalone firmware that runs the model once and exits; "
                        "rpc: a server the host drives (see `microbuild run`); app: your own "
                        "main() from microbuild.yaml's sources (the default when it has some); "
                        "table: runs models packed as data (`microbuild pack`, "
                        "docs/model-blob.md; host board only so far)")
    p.add_argument("--kernels-for", nargs="+", metavar="MODEL",
                   help="with --executor table: the models whose kernels the firmware links "
                        "(default: the --model models); with --executor rpc: also a kernel set "
                        "and a RAM slot, to run blobs uploaded with `microbuild run --blob`")
    p.add_argument("--blob-slot", metavar="BYTES",
                   help="with --executor rpc --kernels-for: bytes of the RAM slot uploaded blobs "
                        "and their workspaces go in (e.g. 256K; default: room for a model about "
                        "as large as the largest --kernels-for one)")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD[-EXECUTOR], "
                                           "under microbuild.yaml's build_dir)")
    p.add_argument("--toolchain", help="one of the board's toolchain families, e.g. clang "
                                       "(default: the board's first)")
    p.add_argument("--input", help=".npy/.npz input embedded in the firmware (default: random, "
                                   "seeded by --seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--run", action="store_true",
                   help="boot it in the emulator (or as a host process) and print the outputs")
    p.add_argument("--output", help="with --run: save the outputs (.npy, or .npz for several; "
                   "several models: one .npz keyed <model>.output<k>)")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds to wait for the run to finish (default: 300)")
    p.add_argument("--json", action="store_true", help="print sizes (and the run) as JSON")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    add_workspace_argument(p)
    add_row_stream_argument(p)
    p.set_defaults(func=cmd_build)
