"""`microbuild monitor`: the board's console, line by line, with the output records of a
standalone (AOT) firmware decoded into the table `build --run` prints.

A real board's console is its serial port (found from the board's USB ids, or --port); on the
host and emulated boards there is no board to listen to, so monitor starts the firmware (the last
build, or --firmware) and attaches to its console until it exits.
"""

from __future__ import annotations

import argparse

from rich.markup import escape

from microbuild.cli.console import err, out
from microbuild.cli.shared import apply_manifest_board, choose_firmware, render_result
from microbuild.errors import MicrobuildError


def cmd_monitor(args: argparse.Namespace) -> int:
    from microbuild.device.device import open_console
    from microbuild.device.monitor import AotRecordDecoder, monitor, rpc_firmware_advice
    from microbuild.device.runners import runner_for
    from microbuild.boards import resolve_board

    apply_manifest_board(args)
    board = resolve_board(args.board)
    starts_here = board.is_host or board.is_emulated
    chosen = None
    if starts_here or args.firmware:
        chosen = choose_firmware(args, board)
        chosen.check_board(args.force)
    elif not args.raw:
        try:  # the table needs the models' summaries; the last build has them
            chosen = choose_firmware(args, board)
        except MicrobuildError:  # no build here: monitor still shows the raw lines
            chosen = None
    if chosen is not None and chosen.executor == "rpc":
        if starts_here:  # it would only wait for a host to talk to it
            raise MicrobuildError(f"{chosen.elf}: {rpc_firmware_advice(board.name)}")
        # The last build is not necessarily what the board runs: say it, and watch anyway.
        err.print(f"note: {escape(str(chosen.elf))} ({chosen.how}) is an RPC firmware; if the "
                  "board runs it, nothing will show here (`microbuild run --no-flash` drives it)",
                  highlight=False)
    if starts_here:
        assert chosen is not None
        transport = runner_for(board, args.runner).start(chosen.elf)
        err.print(f"started {escape(str(chosen.elf))} on {board.name} "
                  f"({escape(transport.describe())}); Ctrl-C to stop", highlight=False)
    else:
        transport = open_console(board, args.port)
        err.print(f"monitoring {board.name} on {escape(transport.describe())}; Ctrl-C to stop",
                  highlight=False)
    transport_name = f"{board.name} on {transport.describe()}"
    decoder = None
    if not args.raw and chosen is not None and chosen.build is not None \
            and chosen.build.executor == "aot":
        decoder = AotRecordDecoder(chosen.build.models, board)

    def on_line(line: str) -> None:
        out.print(escape(line), highlight=False, soft_wrap=True)

    def on_result(result) -> None:
        render_result(result, board)

    try:
        end = monitor(transport, on_line, decoder, on_result, timeout=args.timeout,
                      board_name=board.name)
    finally:
        transport.close()
    if end.reason == "rpc":
        raise MicrobuildError(f"{transport_name}: {end.detail}")
    if end.detail:
        err.print(escape(end.detail))
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("monitor", help="show the board's console (QEMU and host boards: "
                                            "start the firmware and attach)")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--port", help="real boards: serial port (default: found from the board's "
                                  "USB ids) or HOST:PORT for TCP")
    p.add_argument("--firmware", help="the ELF on the board, or to start on QEMU/host boards "
                                      "(default: the last one built for the board)")
    p.add_argument("-o", "--out-dir", help="take the firmware from this build folder")
    p.add_argument("--runner", help="QEMU/host boards: how to start the firmware")
    p.add_argument("--timeout", type=float, help="stop after this many seconds (default: when "
                                                 "the firmware exits, or Ctrl-C)")
    p.add_argument("--raw", action="store_true", help="print the lines only, no output tables")
    p.add_argument("--force", action="store_true",
                   help="start an ELF whose note says it was built for another board")
    p.set_defaults(func=cmd_monitor)
