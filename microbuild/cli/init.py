"""`microbuild init`: write the project manifest (microbuild.yaml) in the current folder."""

from __future__ import annotations

import argparse

from microbuild.cli.console import out
from microbuild.manifest import write_manifest


def cmd_init(args: argparse.Namespace) -> int:
    path = write_manifest(args.dir, board=args.board, models=args.model, sources=args.source,
                          force=args.force)
    filled = [what for what, given in (("board", args.board), ("models", args.model),
                                        ("sources", args.source)) if given]
    out.print(f"wrote {path}" + (f" ({', '.join(filled)} filled in; the rest commented)"
                                 if filled else " (a commented template: uncomment and edit)"),
              soft_wrap=True)
    out.print("then: microbuild build   (from this folder or any folder below it)")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("init", help="write microbuild.yaml, the project manifest that lets "
                                         "build, run, tune and generate work without options")
    p.add_argument("--board", help="the board (a name or a board YAML file)")
    p.add_argument("--model", action="append", help=".tflite model (repeat for several)")
    p.add_argument("--source", action="append",
                   help="your C/C++ file, folder or glob (repeat for several)")
    p.add_argument("--dir", default=".", help="where to write it (default: here)")
    p.add_argument("--force", action="store_true", help="replace an existing microbuild.yaml")
    p.set_defaults(func=cmd_init)
