"""`microbuild flash`: program a board with a firmware."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.firmware import build_incrementally, default_out_dir
from microbuild.cli.firmware import add_workspace_argument
from microbuild.cli.kernel_options import add_kernel_arguments
from microbuild.errors import MicrobuildError


def _firmware_to_flash(args: argparse.Namespace):
    from microbuild.firmware.build import resolve_board

    board = resolve_board(args.board)
    if args.firmware:
        path = Path(args.firmware)
        if not path.is_file():
            raise MicrobuildError(f"--firmware {path}: no such file")
        return board, path
    if args.model:
        return board, build_incrementally(args, args.executor, None).elf
    for executor in ("rpc", "aot"):
        folder = Path(args.out_dir or default_out_dir(args.board, executor))
        for candidate in (folder / "firmware.elf", folder / "firmware"):
            if candidate.is_file():
                return board, candidate
    raise MicrobuildError(f"no firmware to flash for {args.board}: build one (`microbuild build "
                          f"--board {args.board} --model M.tflite [--executor rpc]`), pass "
                          "--model to build it now, or pass --firmware FILE")


def cmd_flash(args: argparse.Namespace) -> int:
    board, elf = _firmware_to_flash(args)
    runner = api.flash_firmware(board, elf, runner=args.runner, port=args.port,
                                progress=lambda line: err.print(escape(line)))
    out.print(f"flashed {elf} to {board.name} with {runner}")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("flash", help="program a board with a firmware")
    p.add_argument("--board", required=True, help="board name or board YAML file")
    p.add_argument("--firmware", help="the ELF to flash (default: the last one built for the "
                                      "board, RPC first)")
    p.add_argument("--model", action="append", help="build a firmware for this model first")
    p.add_argument("--executor", default="rpc", choices=["rpc", "aot"],
                   help="with --model: the executor to build (default: rpc)")
    p.add_argument("--runner", help="flash tool, one of the board's `flash:` runners (default: "
                                    "the first)")
    p.add_argument("--port", help="serial port, for runners that need one (avrdude)")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD-rpc)")
    p.add_argument("--toolchain", help="with --model: one of the board's toolchain families")
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    add_workspace_argument(p)
    p.set_defaults(func=cmd_flash)
