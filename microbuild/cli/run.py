"""`microbuild run`: start the firmware on the board and drive the model from the host
(--profile times each operator), or run the standalone AOT firmware."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.markup import escape

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.shared import (build_incrementally, check_output_name, choose_firmware,
                                     profile_rows, render_outputs, render_profile, render_result,
                                     run_app, save_outputs)
from microbuild.cli.shared import add_row_stream_argument, add_workspace_argument
from microbuild.cli.kernel_options import add_kernel_arguments
from microbuild.errors import MicrobuildError
from microbuild.manifest import apply_manifest, require


def _firmware(args: argparse.Namespace):
    """(the FirmwareBuild to run, its executor): built now from --model, or --firmware F, or the
    board's last build (--no-flash without --model: what is on the board)."""
    from microbuild.boards import resolve_board

    if args.model and not args.firmware:
        executor = args.executor or "rpc"
        return build_incrementally(args, executor, args.input if executor == "aot" else None), \
            executor
    if not args.model and not args.firmware and not args.no_flash:
        raise MicrobuildError("say what to run: --model M.tflite (built now), --firmware F, or "
                              "--no-flash for the firmware the last build put on the board")
    board = resolve_board(args.board)
    chosen = choose_firmware(args, board)
    chosen.check_board(args.force)
    if chosen.build is None:
        raise MicrobuildError(f"{chosen.elf}: microbuild cannot drive it: "
                              + ("it has no .note.microbuild section" if chosen.note is None
                                 else f"its build folder ({chosen.elf.parent}) no longer has "
                                      "the models' descriptions")
                              + "; build it again with microbuild")
    if args.executor and args.executor != chosen.build.executor:
        raise MicrobuildError(f"{chosen.elf} is an {chosen.build.executor} firmware, not "
                              f"{args.executor}")
    if args.input and chosen.build.executor == "aot":
        raise MicrobuildError(f"{chosen.elf} is an AOT firmware: its input is embedded at build "
                              "time; pass --model (and --input) to build one with your input")
    return chosen.build, chosen.build.executor


def write_profile_svg(path: str, profile, summary, build, several: bool) -> Path:
    from microbuild.device.profile_svg import profile_svg
    from microbuild.device.timing import duration

    target = Path(path)
    if several:
        target = target.with_name(f"{target.stem}-{profile.model}{target.suffix or '.svg'}")
    unit = duration(1, profile.timer_hz, build.board).kind
    title = (f"{profile.model} on {profile.board}: {profile.op_ticks:,} ticks over "
             f"{len(profile.ops)} operators (timer {profile.timer_hz:,} Hz)")
    target.write_text(profile_svg(title, f"1 tick = 1/{profile.timer_hz:,} s; {unit}",
                                  profile_rows(profile, summary)), encoding="utf-8")
    return target


def cmd_run(args: argparse.Namespace) -> int:
    from microbuild.tensor_files import load_inputs, random_inputs

    apply_manifest(args, executor_default="rpc")
    require(args, "board")  # the models: --model, the manifest's, --firmware or the last build
    check_output_name(args.output)
    if args.profile_svg and not args.profile:
        raise MicrobuildError("--profile-svg draws the per-operator profile: add --profile")
    if args.executor == "app":
        if args.profile or args.input or args.output or args.json:
            raise MicrobuildError("--profile, --input, --output and --json drive microbuild's "
                                  "harnesses; your own application (executor app) runs as it "
                                  "is: pass --executor rpc or aot for them")
        build = build_incrementally(args, "app", None)
        return run_app(build, args.runner, args.timeout)
    if args.blob:
        return _run_blob(args)
    build, executor = _firmware(args)
    if executor == "aot":
        if args.profile:
            raise MicrobuildError("--profile times each operator from the host: it needs "
                                  "--executor rpc (the default)")
        if args.no_flash and not (build.board.is_host or build.board.is_emulated):
            raise MicrobuildError(
                f"{build.elf} is a standalone (AOT) firmware: it runs once at reset and prints "
                f"its outputs; watch them with `microbuild monitor --board {build.board.name}`")
        result = api.run_firmware(build, runner=args.runner, timeout=args.timeout)
        if args.output:
            save_outputs(args.output, build, result.outputs)
        if args.json:
            print(json.dumps({"board": build.board.name, "executor": "aot",
                              "elf": str(build.elf), "run": result.to_dict()}, indent=2))
        else:
            render_result(result, build.board)
        return 0

    from microbuild.device.timing import duration

    show = not args.json

    def log(line: str) -> None:
        if show:
            err.print(f"[dim]device:[/] {escape(line)}", highlight=False)

    if show:
        real = not (build.board.is_host or build.board.is_emulated)
        err.print(f"connecting to {build.elf.name} on {build.board.name} (not flashed)..."
                  if real and args.no_flash else
                  f"starting {build.elf.name} on {build.board.name}...")
    documents = []
    all_outputs: dict[str, list] = {}
    with api.connect(build.board, build, runner=args.runner, port=args.port,
                     timeout=args.timeout, on_log=log, flash=not args.no_flash) as dev:
        for model in build.models:
            prefix = model["prefix"]
            specs = dev.specs(prefix)
            several = prefix if len(build.models) > 1 else None
            x = (load_inputs(args.input, specs, model=several) if args.input
                 else random_inputs(specs, args.seed))
            if args.profile:
                profile = dev.profile(prefix, x, repeat=args.repeat)
                outputs, ticks = profile.outputs, profile.model_ticks
            else:
                profile = None
                outputs, ticks = dev.run_timed(prefix, x)
            all_outputs[prefix] = outputs
            hz = dev.info.timer_hz
            doc = {"model": prefix, "outputs": [a.tolist() for a in outputs], "ticks": ticks,
                   "timer_hz": hz}
            if profile is not None:
                doc["profile"] = profile.to_dict()
                for op, row in zip(doc["profile"]["ops"], profile_rows(profile, model)):
                    op.update(kernel=row["kernel"], macs=row["macs"],
                              macs_per_tick=row["macs_per_tick"])
            documents.append(doc)
            if not args.json:
                render_outputs(prefix, outputs)
                out.print(f"{prefix}: {ticks:,} timer ticks per inference at {hz:,} Hz = "
                          f"{duration(ticks, hz, build.board)} (host-driven, "
                          f"{dev.client.transport.describe()})")
                if profile is not None:
                    render_profile(profile, build.board, model)
            if profile is not None and args.profile_svg:
                path = write_profile_svg(args.profile_svg, profile, model, build,
                                         several=len(build.models) > 1)
                if not args.json:
                    out.print(f"profile drawn in {path}")
        stats = dev.client.stats
    if args.output:
        save_outputs(args.output, build, all_outputs)
    if args.json:
        print(json.dumps({"board": build.board.name, "executor": "rpc", "elf": str(build.elf),
                          "models": documents,
                          "link": {"requests": stats.requests,
                                   "retransmissions": stats.retransmissions}}, indent=2))
    elif args.output:
        out.print(f"outputs saved to {args.output}")
    return 0


def _run_blob(args: argparse.Namespace) -> int:
    """--blob: upload a model blob (or a .tflite, packed now for the firmware) into the RAM slot
    of an RPC firmware with a table runner and run it once, without flashing anything."""
    import tempfile

    import numpy as np

    from microbuild.boards import resolve_board
    from microbuild.device.blob_run import blob_inputs, check_for_firmware, run_blob
    from microbuild.device.timing import duration

    if args.model or args.profile:
        raise MicrobuildError("--blob runs the blob on --firmware as it is: drop --model and "
                              "--profile")
    board = resolve_board(args.board)
    chosen = choose_firmware(args, board)
    chosen.check_board(args.force)
    note = chosen.note
    if note is None or note.executor != "rpc" or not note.table:
        raise MicrobuildError(
            f"{chosen.elf} cannot run blobs uploaded over RPC: it is "
            + ("not built by microbuild" if note is None else
               f"an {note.executor} firmware" + ("" if note.executor != "rpc" else
                                                 " without a table runner"))
            + f"; build one with `microbuild build --board {board.name} --executor rpc "
              "--kernels-for MODEL.tflite ...`")
    path = Path(args.blob)
    if not path.is_file():
        raise MicrobuildError(f"--blob {path}: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        if path.suffix == ".tflite":
            data = api.pack(chosen.elf, path, Path(tmp) / f"{path.stem}.mbm").blob
        else:
            data = path.read_bytes()
    kernel_set = int(note.table["id"], 16)
    if chosen.build is not None:  # what can be told from the description: before starting it
        check_for_firmware(chosen.build.rpc_description, data, kernel_set, str(path))
    inputs = blob_inputs(data, args.input, args.seed)
    show = not args.json

    def log(line: str) -> None:
        if show:
            err.print(f"[dim]device:[/] {escape(line)}", highlight=False)

    with api.connect(board, chosen.elf, runner=args.runner, port=args.port,
                     timeout=args.timeout, on_log=log, flash=not args.no_flash) as dev:
        result = run_blob(dev, data, inputs, kernel_set, name=str(path))
        hz = dev.info.timer_hz
    outputs = [np.frombuffer(o, dtype=np.uint8) for o in result.outputs]
    if args.output:
        np.savez(args.output, **{f"output{k}": o for k, o in enumerate(outputs)})
    if args.json:
        print(json.dumps({"board": board.name, "executor": "rpc", "elf": str(chosen.elf),
                          "blob": str(path), "outputs": [o.hex() for o in result.outputs],
                          "ticks": result.ticks, "timer_hz": hz}, indent=2))
        return 0
    render_outputs(path.stem, outputs)
    out.print(f"{path.name}: {result.ticks:,} timer ticks at {hz:,} Hz = "
              f"{duration(result.ticks, hz, board)} (uploaded into the RAM slot, not flashed)")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("run", help="build if needed, start the firmware on the board and "
                                        "run the model from the host; --profile times each "
                                        "operator")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--model", action="append",
                   help=".tflite model (repeat for several), built now (default: "
                        "microbuild.yaml's)")
    p.add_argument("--firmware", help="run this ELF (built by microbuild) instead of building")
    p.add_argument("--no-flash", action="store_true",
                   help="real boards: drive the firmware already on the board (default: the last "
                        "one built for it; the device's build id must match)")
    p.add_argument("--force", action="store_true",
                   help="use a --firmware whose note says it was built for another board")
    p.add_argument("--executor", choices=["rpc", "aot", "app"],
                   help="rpc (default with --model): the host drives the model over the "
                        "console; aot: the standalone firmware runs on an input embedded at "
                        "build time; app: your own main() from microbuild.yaml's sources, run to "
                        "its end (the default when microbuild.yaml has sources)")
    p.add_argument("--blob", metavar="FILE",
                   help="upload this model blob (.mbm; a .tflite is packed for the firmware "
                        "first) into the RAM slot of --firmware (an RPC firmware built with "
                        "--kernels-for) and run it once, without flashing; its outputs are shown "
                        "as bytes")
    p.add_argument("--input", help=".npy/.npz input (default: random, seeded by --seed); several "
                   "models: one .npz keyed <model>.input<k>")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--output", help="save the outputs (.npy, or .npz for several; several "
                   "models: one .npz keyed <model>.output<k>)")
    p.add_argument("--profile", action="store_true",
                   help="run operator by operator and print ticks per operator")
    p.add_argument("--profile-svg", metavar="FILE",
                   help="with --profile: draw the per-operator profile as an SVG bar chart "
                        "(several models: FILE-<model>.svg each)")
    p.add_argument("--repeat", type=int, default=1,
                   help="with --profile: timed runs per operator, the median is shown")
    p.add_argument("--runner", help="how to start or flash the board (default: its first "
                                    "`flash:` runner)")
    p.add_argument("--port", help="real boards: serial port (default: found from the board's "
                                  "USB ids) or HOST:PORT for TCP")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD-rpc)")
    p.add_argument("--toolchain", help="one of the board's toolchain families")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each reply before resending (default: 10)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    add_workspace_argument(p)
    add_row_stream_argument(p)
    p.set_defaults(func=cmd_run)
