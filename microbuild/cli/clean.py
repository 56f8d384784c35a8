"""`microbuild clean`: remove a board's build output (every executor's folder and the record of
its last build), and nothing outside the build folder."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from rich.markup import escape

from microbuild.cli.console import err, out
from microbuild.cli.shared import apply_manifest_board, records_root
from microbuild.manifest import default_out_dir


def board_outputs(board_arg: str, board_name: str, root: Path) -> list[Path]:
    """What `build` writes for the board under ``root``: its folder per executor, the folder its
    last build went to (when under ``root``), and the last-build record."""
    from microbuild.firmware import last_build
    from microbuild.firmware.scons_tool import EXECUTORS

    candidates = [root / default_out_dir(name, executor).relative_to("build")
                  for name in dict.fromkeys([board_arg, board_name]) for executor in EXECUTORS]
    last = last_build.find(board_name, root)
    if last is not None:
        candidates.append(last.out_dir)
    candidates.append(last_build.record_path(board_name, root))
    inside = []
    top = root.resolve()
    for path in dict.fromkeys(p.resolve() for p in candidates):
        if path != top and top in path.parents and path.exists():
            inside.append(path)
    return inside


def cmd_clean(args: argparse.Namespace) -> int:
    from microbuild.boards import resolve_board

    apply_manifest_board(args)
    board = resolve_board(args.board)
    root = Path(args.build_dir) if args.build_dir else records_root(args)
    removed = board_outputs(args.board, board.name, root)
    if not removed:
        out.print(f"nothing to clean for {board.name} in {root}/")
        return 0
    for path in removed:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        out.print(f"removed {escape(str(path))}", soft_wrap=True)
    record = Path(root / "last-build")
    if record.is_dir() and not any(record.iterdir()):
        record.rmdir()
    err.print(f"cleaned {board.name}")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("clean", help="remove a board's build output (every executor)")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--build-dir",
                   help="the build folder (default: microbuild.yaml's build_dir, else build); "
                        "nothing outside it is removed")
    p.set_defaults(func=cmd_clean)
