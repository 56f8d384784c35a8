"""`microbuild flash`: program a board with a firmware (by default what the last `build` for the
board produced), after saying what it is and checking it was built for this board."""

from __future__ import annotations

import argparse

from rich.markup import escape

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.shared import (add_row_stream_argument, add_workspace_argument,
                                     apply_manifest_board, choose_firmware)
from microbuild.cli.kernel_options import add_kernel_arguments


def cmd_flash(args: argparse.Namespace) -> int:
    from microbuild.boards import resolve_board

    apply_manifest_board(args)
    board = resolve_board(args.board)
    api.flash_runner(board, args.runner, args.port)  # the host and QEMU boards: nothing to flash
    chosen = choose_firmware(args, board, build_executor=args.executor)
    for line in chosen.describe():
        err.print(escape(line), highlight=False)
    chosen.check_board(args.force)
    runner = api.flash_firmware(board, chosen.build or chosen.elf, runner=args.runner,
                                port=args.port, progress=lambda line: err.print(escape(line)))
    out.print(f"flashed {chosen.elf} to {board.name} with {runner}")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("flash", help="program a board with a firmware (default: the last "
                                          "one built for it)")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--firmware", help="the ELF to flash (default: what the last `microbuild "
                                      "build` for the board produced)")
    p.add_argument("--force", action="store_true",
                   help="flash an ELF whose note says it was built for another board")
    p.add_argument("--model", action="append", help="build a firmware for this model first")
    p.add_argument("--executor", default="rpc", choices=["rpc", "aot"],
                   help="with --model: the executor to build (default: rpc)")
    p.add_argument("--runner", help="flash tool, one of the board's `flash:` runners (default: "
                                    "the first)")
    p.add_argument("--port", help="serial port, for runners that need one (avrdude)")
    p.add_argument("-o", "--out-dir", help="build folder to flash from (with --model: to build "
                                           "into; default: build/BOARD-EXECUTOR)")
    p.add_argument("--toolchain", help="with --model: one of the board's toolchain families")
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    add_workspace_argument(p)
    add_row_stream_argument(p)
    p.set_defaults(func=cmd_flash)
