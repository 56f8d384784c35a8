"""The command-line options that choose kernel variants, shared by compile, build, run, generate,
ci and tune: ``--tuning tune.json`` (measured winners) and ``--variant OPCODE=NAME`` (forced)."""

from __future__ import annotations

import argparse
from typing import Any

from microbuild.errors import MicrobuildError


def add_kernel_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tuning", metavar="FILE",
                   help="tuning log from `microbuild tune`: each operator runs the kernel "
                        "variant measured fastest on this board's CPU (default: a heuristic "
                        "per CPU)")
    p.add_argument("--variant", action="append", default=[], metavar="OPCODE=NAME",
                   help="force a kernel variant, e.g. CONV_2D=dsp, or '*=reference' for the "
                        "reference kernels everywhere (repeatable; `microbuild compile --json` "
                        "lists each op's choice)")


def parse_variants(items: list[str]) -> dict[str, str]:
    """``["CONV_2D=dsp", "*=reference"]`` -> ``{"CONV_2D": "dsp", "*": "reference"}``; an op
    index (``3=reference``) forces one op."""
    from microbuild.compiler.ops import REGISTRY

    forced: dict[str, str] = {}
    for item in items:
        opcode, sep, name = item.partition("=")
        opcode, name = opcode.strip().upper(), name.strip()
        if not sep or not opcode or not name:
            raise MicrobuildError(f"--variant {item}: write OPCODE=NAME, e.g. CONV_2D=dsp or "
                                  "'*=reference'")
        if opcode != "*" and not opcode.isdigit() and opcode not in REGISTRY:
            raise MicrobuildError(f"--variant {item}: unknown operator {opcode}; operators with "
                                  "variants: " + ", ".join(sorted(
                                      k for k, v in REGISTRY.items() if v.variants)))
        forced[opcode] = name
    return forced


def kernel_options(args: argparse.Namespace) -> dict[str, Any]:
    """``tuning=`` and ``variants=`` keyword arguments for build_firmware and friends. A tuning
    log measured on an emulator, used for a real board (``args.board``), is warned about here,
    once per command (build, run, flash, compile, generate)."""
    options: dict[str, Any] = {}
    if getattr(args, "tuning", None):
        options["tuning"] = args.tuning
        if getattr(args, "board", None):
            warn_about_tuning_log(args.tuning, args.board)
    forced = parse_variants(getattr(args, "variant", None) or [])
    if forced:
        options["variants"] = forced
    return options


def warn_about_tuning_log(path: str, board_name: str) -> None:
    """Print TuningLog.emulator_warning for ``board_name`` (nothing when the log cannot be read:
    the build reports that with its own error)."""
    from microbuild.cli.console import err
    from microbuild.compiler.variants import Target
    from microbuild.firmware.build import resolve_board
    from microbuild.tuning import TuningLog

    try:
        board = resolve_board(board_name)
        log = TuningLog.load(path)
    except MicrobuildError:
        return
    warning = log.emulator_warning(board, Target.of_board(board).cpu)
    if warning:
        from rich.markup import escape

        err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
