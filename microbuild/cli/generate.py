"""`microbuild generate`: write (and with --build, build) a project for a board and models in one
of the registered project formats (microbuild/project/formats/).

    microbuild generate --board B --model M.tflite --format platformio|zephyr|scons|make -o DIR
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from microbuild.cli.shared import add_workspace_argument, separate_workspace
from microbuild.cli.kernel_options import add_kernel_arguments, kernel_options
from microbuild.project import build_project, generate_project
from microbuild.project.formats import FORMATS as FORMAT_CLASSES
from microbuild.project.formats import format_names
from microbuild.project.executors import EXECUTORS, NOT_YET


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "generate", help="write a project (PlatformIO, Zephyr, SCons or Make) that builds a "
                         "firmware for a board and a model with its own tools",
        description="Write a self-contained project for BOARD running MODEL into DIR: the "
                    "runtime it needs is copied in, src/main.c is yours (kept when you generate "
                    "again), everything else is generated (replaced). Its README.md says how to "
                    "build, flash and run it.")
    p.add_argument("--board",
                   help="board name (see `microbuild boards list`) or a board YAML file "
                        "(default: microbuild.yaml's)")
    p.add_argument("--model", action="append",
                   help=".tflite model (repeat for several models in one firmware; default: "
                        "microbuild.yaml's)")
    formats = format_names()  # every registered format, each with its own summary
    p.add_argument("--format", choices=formats, dest="format",
                   help="; ".join(f"{name}: {FORMAT_CLASSES[name].summary}" for name in formats)
                   + " (default with a microbuild.yaml: make)")
    p.add_argument("--executor", default="aot",
                   choices=sorted({*EXECUTORS, *NOT_YET, "table"}),
                   help="aot (default): the standalone firmware that runs the model on an "
                        "embedded input, prints the outputs and stops; table (every format): "
                        "links the kernels the models call and runs models packed as data "
                        "(`microbuild pack`, `microbuild update`: docs/model-blob.md)")
    p.add_argument("-o", "--out", metavar="DIR",
                   help="project folder: new, empty, or generated earlier by microbuild "
                        "(default with a microbuild.yaml: FORMAT-project beside it)")
    p.add_argument("--link-runtime", action="store_true",
                   help="use this installation's runtime/ in place instead of copying it in")
    p.add_argument("--toolchain", help="one of the board's toolchain families for the bare-metal "
                                       "formats, e.g. clang (default: the board's first)")
    p.add_argument("--input", help=".npy/.npz input embedded in the firmware (default: random, "
                                   "seeded by --seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--build", action="store_true",
                   help="then build it with its own tool (pio run, west build, scons, make)")
    add_kernel_arguments(p)
    add_workspace_argument(p)
    p.set_defaults(func=cmd_generate)
    return p


def cmd_generate(args: argparse.Namespace) -> int:
    """Generate (and with --build, build) the project; MicrobuildError propagates to the CLI,
    which prints its message."""
    from microbuild.manifest import apply_manifest, require

    manifest = apply_manifest(args)
    if manifest is not None:
        args.format = args.format or "make"
        args.out = args.out or str(manifest.root / f"{args.format}-project")
    require(args, "board", "model", "format", "out")
    result = generate_project(args.board, args.model, args.format, Path(args.out),
                              executor=args.executor, link_runtime=args.link_runtime,
                              toolchain=args.toolchain, input=args.input, seed=args.seed,
                              separate_workspace=separate_workspace(args),
                              **kernel_options(args))
    out = result.out_dir
    changed = len(result.written)
    print(f"{result.format} project for board {result.board} in {out}: {len(result.generated)} "
          f"generated files ({changed} written, {len(result.generated) - changed} unchanged)")
    for rel in result.user_created:
        print(f"  created {rel} (yours: never overwritten)")
    for rel in result.user_kept:
        print(f"  kept your {rel}")
    for rel in result.removed:
        print(f"  removed {rel} (no longer part of the project)")
    for rel in result.replaced_edits:
        print(f"  warning: replaced {rel}, which you had edited (generated files are replaced)",
              file=sys.stderr)
    for rel in result.left_edited:
        print(f"  note: {rel} is no longer generated but you had edited it: left in place",
              file=sys.stderr)
    cd = f"cd {shlex.quote(str(out))} && "  # a folder with spaces must survive a paste
    print("build: " + cd + " && ".join(result.build))
    if result.run:
        print("run:   " + cd + " && ".join(result.run))
    print(f"more:  {result.readme}")
    if args.build:
        build_project(out)
        print("built")
    return 0
