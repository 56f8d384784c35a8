"""`microbuild run`: start the firmware on the board and drive the model from the host
(--profile times each operator), or run the standalone AOT firmware."""

from __future__ import annotations

import argparse
import json

from rich.markup import escape

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.firmware import (build_incrementally, check_output_name, render_outputs,
                                     render_profile, render_result, run_app, save_outputs)
from microbuild.cli.kernel_options import add_kernel_arguments
from microbuild.errors import MicrobuildError
from microbuild.manifest import apply_manifest, require


def cmd_run(args: argparse.Namespace) -> int:
    from microbuild.tensor_files import load_inputs, random_inputs

    apply_manifest(args, executor_default="rpc")
    require(args, "board", "model")
    args.executor = args.executor or "rpc"
    check_output_name(args.output)
    if args.executor == "app":
        if args.profile or args.input or args.output or args.json:
            raise MicrobuildError("--profile, --input, --output and --json drive microbuild's "
                                  "harnesses; your own application (executor app) runs as it "
                                  "is: pass --executor rpc or aot for them")
        build = build_incrementally(args, "app", None)
        return run_app(build, args.runner, args.timeout)
    if args.executor == "aot":
        if args.profile:
            raise MicrobuildError("--profile times each operator from the host: it needs "
                                  "--executor rpc (the default)")
        build = build_incrementally(args, "aot", args.input)
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

    build = build_incrementally(args, "rpc", None)
    show = not args.json

    def log(line: str) -> None:
        if show:
            err.print(f"[dim]device:[/] {escape(line)}", highlight=False)

    if show:
        err.print(f"starting {build.elf.name} on {build.board.name}...")
    documents = []
    all_outputs: dict[str, list] = {}
    with api.connect(build.board, build, runner=args.runner, port=args.port,
                     timeout=args.timeout, on_log=log) as dev:
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
            documents.append(doc)
            if not args.json:
                render_outputs(prefix, outputs)
                out.print(f"{prefix}: {ticks:,} timer ticks per inference at {hz:,} Hz = "
                          f"{duration(ticks, hz, build.board)} (host-driven, "
                          f"{dev.client.transport.describe()})")
                if profile is not None:
                    render_profile(profile, build.board)
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


def add_parser(commands) -> None:
    p = commands.add_parser("run", help="build if needed, start the firmware on the board and "
                                        "run the model from the host; --profile times each "
                                        "operator")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--model", action="append",
                   help=".tflite model (repeat for several; default: microbuild.yaml's)")
    p.add_argument("--executor", choices=["rpc", "aot", "app"],
                   help="rpc (default): the host drives the model over the console; aot: the "
                        "standalone firmware runs on an input embedded at build time; app: "
                        "your own main() from microbuild.yaml's sources, run to its end (the "
                        "default when microbuild.yaml has sources)")
    p.add_argument("--input", help=".npy/.npz input (default: random, seeded by --seed); several "
                   "models: one .npz keyed <model>.input<k>")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--output", help="save the outputs (.npy, or .npz for several; several "
                   "models: one .npz keyed <model>.output<k>)")
    p.add_argument("--profile", action="store_true",
                   help="run operator by operator and print ticks per operator")
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
    p.set_defaults(func=cmd_run)
