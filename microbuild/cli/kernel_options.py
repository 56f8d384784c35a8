"""The command-line options that choose kernel variants, shared by compile, build, run, generate,
ci and tune: ``--tuning tune.json`` (measured winners), ``--variant OPCODE=NAME`` (forced) and
``--allow-float-reorder`` (float kernels not bit-exact with TFLM may be chosen; it travels with
the forced variants, see compiler/variants.py FLOAT_REORDER_KEY)."""

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
    p.add_argument("--allow-float-reorder", action="store_true",
                   help="let float32 operators run kernels that add their sums in another order "
                        "than TFLM (Helium's float lanes on a Cortex-M55: faster, NOT bit-exact "
                        "with TFLM); compile and build then report the largest difference "
                        "measured on the model")


def kernel_options(args: argparse.Namespace) -> dict[str, Any]:
    """``tuning=`` and ``variants=`` keyword arguments for build_firmware and friends. A tuning
    log measured on an emulator, used for a real board (``args.board``), is warned about here,
    once per command (build, run, flash, compile, generate)."""
    # Imported here: it loads every operator module, which `microbuild --help` should not wait for.
    from microbuild.compiler.forced_variants import parse_variants

    options: dict[str, Any] = {}
    if getattr(args, "tuning", None):
        options["tuning"] = args.tuning
        if getattr(args, "board", None):
            warn_about_tuning_log(args.tuning, args.board)
    forced = parse_variants(getattr(args, "variant", None) or [])
    if getattr(args, "allow_float_reorder", False):
        from microbuild.compiler.variants import allowing_float_reorder

        forced = allowing_float_reorder(forced)
    if forced:
        options["variants"] = forced
    return options


def warn_about_tuning_log(path: str, board_name: str) -> None:
    """Print TuningLog.emulator_warning for ``board_name`` (nothing when the log cannot be read:
    the build reports that with its own error)."""
    from microbuild.cli.console import err
    from microbuild.compiler.variants import Target
    from microbuild.boards import resolve_board
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


def measure_float_reorder(args: argparse.Namespace, board: Any, options: dict[str, Any],
                          summary: dict[str, Any], model: str) -> Any:
    """With --allow-float-reorder, when the compiled model (``summary``) runs a kernel that
    reorders float sums: its largest difference from TFLM, measured on ``board`` (a
    ReorderReport), printed unless --json; else None."""
    from microbuild.tuning.float_reorder import measure_float_reorder as measure
    from microbuild.tuning.float_reorder import reordering_ops

    ops = reordering_ops(summary)
    if not ops or board is None:
        return None
    from microbuild.cli.console import err, out

    if not getattr(args, "json", False):
        err.print(f"measuring how far the reordering kernels ({', '.join(ops)}) move the "
                  f"outputs of {model} from TFLM's...", soft_wrap=True)
    report = measure(board, model, tuning=options.get("tuning"),
                     variants=options.get("variants"), seed=getattr(args, "seed", 0) or 0,
                     ops=ops, toolchain=getattr(args, "toolchain", None))
    if not getattr(args, "json", False):
        from rich.markup import escape

        first, *rest = report.lines()
        out.print(f"[yellow]warning:[/] {escape(first)}", soft_wrap=True)
        for line in rest:
            out.print(f"  {escape(line)}", soft_wrap=True)
    return report
