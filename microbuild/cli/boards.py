"""`microbuild boards list|show|validate|new`: the board definitions."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from rich.table import Table

from microbuild import api
from microbuild.boards import format_size
from microbuild.cli.console import out


def cmd_boards_list(args: argparse.Namespace) -> int:
    boards, broken = api.scan_boards()
    table = Table(title=f"{len(boards)} boards", title_justify="left")
    for column in ("name", "core", "flash", "RAM", "toolchain", "default runner", "emulated"):
        table.add_column(column)
    for b in boards:
        emulated = "native" if b.is_host else ("yes" if b.is_emulated else "no")
        table.add_row(b.name, b.core, format_size(b.flash_bytes) if b.flash_bytes else "-",
                      format_size(b.ram_bytes) if b.ram_bytes else "-", b.toolchain.family,
                      b.default_runner, emulated)
    out.print(table)
    for line in broken:  # an invalid file is reported, not fatal: the others are still listed
        print(f"error: {line}", file=sys.stderr)
    return 0


def cmd_boards_show(args: argparse.Namespace) -> int:
    print(api.board_yaml(api.get_board(args.name)), end="")
    return 0


def cmd_boards_validate(args: argparse.Namespace) -> int:
    problems = api.validate_board_files([Path(f) for f in args.files])
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {len(args.files)} file(s)", file=sys.stderr)
        return 1
    print(f"{len(args.files)} board file(s) valid")
    return 0


def cmd_boards_new(args: argparse.Namespace) -> int:
    path = api.new_board(args.name, args.base, Path(args.output_dir), force=args.force)
    print(f"wrote {path} (extends {args.base}); edit it, then "
          f"`microbuild boards validate {shlex.quote(str(path))}`")
    return 0


def add_parser(commands) -> None:
    boards = commands.add_parser("boards", help="list, show, validate and create board definitions")
    board_cmds = boards.add_subparsers(dest="boards_command", metavar="SUBCOMMAND", required=True)
    p = board_cmds.add_parser("list", help="table of every board on the search path")
    p.set_defaults(func=cmd_boards_list)
    p = board_cmds.add_parser("show", help="a board's definition after inheritance, as YAML")
    p.add_argument("name")
    p.set_defaults(func=cmd_boards_show)
    p = board_cmds.add_parser("validate", help="check board files; prints file:line: key: message")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_boards_validate)
    p = board_cmds.add_parser("new", help="start a new board file that extends an existing board")
    p.add_argument("name")
    p.add_argument("--from", dest="base", required=True, metavar="BASE", help="board to extend")
    p.add_argument("-o", "--output-dir", default="boards",
                   help="folder to write NAME.yaml in (default: ./boards, which is on the search path)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=cmd_boards_new)
