"""`microbuild debug`: start a GDB server for the board (QEMU halted at reset on emulated boards,
the flash runner's GDB server on real ones) with the last build (or --firmware), and print the
exact GDB command that attaches to it. Runs until the server exits or Ctrl-C."""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys

from rich.markup import escape

from microbuild.cli.console import err
from microbuild.cli.shared import apply_manifest_board, choose_firmware
from microbuild.errors import ToolchainError


def _stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt


def _ignore_while_stopping(signum, frame):
    pass  # already stopping the server: a late SIGTERM must not cut that short


def cmd_debug(args: argparse.Namespace) -> int:
    from microbuild.device.debug import debug_session, gdb_program
    from microbuild.boards import resolve_board

    apply_manifest_board(args)
    board = resolve_board(args.board)
    gdb = args.gdb or gdb_program(board)
    chosen = choose_firmware(args, board)
    for line in chosen.describe():
        err.print(escape(line), highlight=False)
    chosen.check_board(args.force)
    session = debug_session(board, chosen.elf, runner=args.runner, port=args.gdb_port)
    program = session.server[0]
    if shutil.which(program) is None:
        from microbuild.device.runners import install_hint

        hint = install_hint(session.runner)
        raise ToolchainError(f"the GDB server of runner {session.runner}, {program}, is not "
                             f"installed" + (f"; {hint}" if hint else ""))
    err.print(f"GDB server: {escape(' '.join(session.server))}", highlight=False, soft_wrap=True)
    # SIGTERM (a script or IDE stopping `microbuild debug`) stops the server too.
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    server = subprocess.Popen(session.server, stdin=subprocess.DEVNULL)
    try:
        # On stdout, on a line of its own, so a script can take it.
        print(f"attach with: {session.gdb_command_text(gdb)}", flush=True)
        status = server.wait()
    except KeyboardInterrupt:
        status = 0
    finally:
        signal.signal(signal.SIGTERM, _ignore_while_stopping)
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    if status in (-signal.SIGTERM, -signal.SIGINT):
        status = 0  # the server was stopped (with us, by a signal to the process group)
    if status:
        err.print(f"[red]the GDB server exited with status {status}[/]")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, previous)
    return 1 if status else 0


def add_parser(commands) -> None:
    p = commands.add_parser("debug", help="start a GDB server for the board (QEMU halted at "
                                          "reset, or the probe's server) and print the GDB "
                                          "command to attach")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--firmware", help="the ELF to debug (default: the last one built for the "
                                      "board)")
    p.add_argument("-o", "--out-dir", help="take the firmware from this build folder")
    p.add_argument("--runner", help="whose GDB server (default: the board's first runner)")
    p.add_argument("--gdb-port", type=int, help="the server's TCP port (default: a free one)")
    p.add_argument("--gdb", help="the GDB to print the command for (default: arm-none-eabi-gdb "
                                 "or gdb-multiarch, whichever is installed)")
    p.add_argument("--force", action="store_true",
                   help="debug an ELF whose note says it was built for another board")
    p.set_defaults(func=cmd_debug)
