"""The `microbuild` command: parses arguments, calls microbuild.api, renders the result.

One module per command (init, boards, compile, ops, platformio-core, build, run, flash,
monitor, debug, clean, tune, generate, ci, validate, quantize); `shared` holds what build, run and
flash share (it is no command). No logic lives here that a Python user could not reach through the
API. A user's mistake (MicrobuildError) is printed as one clear message and its exit code (1);
argparse usage errors exit 2.

The commands import the rooms they drive (compiler, firmware, device, tuning) inside their
functions, on purpose: those load numpy, SCons, pyelftools and every operator module, which
`microbuild --help` and a mistyped option should not wait for.
"""

from __future__ import annotations

import argparse
import sys

from rich.markup import escape

from microbuild import __version__
from microbuild.cli import (boards, build, ci, clean, compile, debug, flash, generate, init,
                            monitor, ops, pack, platformio_core, quantize, run, tune, update,
                            validate)
from microbuild.cli.console import err
from microbuild.errors import MicrobuildError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="microbuild",
        description="Compile int8 TFLite models to C and build, flash and run them on microcontroller "
                    "boards described in YAML.")
    parser.add_argument("--version", action="version", version=f"microbuild {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # The order of `microbuild --help`.
    for command in (init, boards, compile, platformio_core, ops, build, pack, update, run,
                    validate, quantize, flash, monitor, debug, clean, tune, generate, ci):
        command.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except MicrobuildError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True, markup=True,
                  highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`microbuild ... | head`): not an error worth a traceback.
        sys.stderr.close()
        return 0
