"""`microbuild tune`: time every kernel variant on the board and log the fastest correct one."""

from __future__ import annotations

import argparse
import json

from rich.markup import escape
from rich.table import Table

from microbuild.cli.console import err, out
from microbuild.manifest import apply_manifest, require


def cmd_tune(args: argparse.Namespace) -> int:
    from microbuild.boards import resolve_board
    from microbuild.device.timing import duration, icount_shift
    from microbuild.tuning.tuner import short_signature, speedup, tune

    manifest = apply_manifest(args, executor_default="tune")
    require(args, "board", "model")
    if args.log is None:
        # The models' own log when the manifest names one log for all; else tune.json beside
        # the manifest (or here).
        logs = {m.tuning for m in args.manifest_models or []}
        args.log = (str(logs.pop()) if len(logs) == 1 and None not in logs else
                    str(manifest.root / "tune.json") if manifest is not None else "tune.json")
    board = resolve_board(args.board)
    show = not args.json

    def progress(line: str) -> None:
        if show:
            err.print(escape(line), highlight=False)

    report = tune(board, args.model, args.log, out_dir=args.out_dir, trials=args.trials,
                  warmup=args.warmup, repeat=args.repeat, runner=args.runner, port=args.port,
                  toolchain=args.toolchain, timeout=args.timeout, seed=args.seed,
                  max_flash=args.max_flash, check_fit=not args.no_fit_check,
                  allow_float_reorder=args.allow_float_reorder, progress=progress)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    out.print(f"{board.name} ({report.cpu}): median timer ticks per operator call at "
              f"{report.timer_hz:,} Hz; per candidate its op's weights (flash, and the change "
              f"over the default kernel for every op of the signature) and its scratch (RAM)")
    shift = icount_shift(board)
    if shift is not None:
        per_tick = duration(1, report.timer_hz, board).instructions
        out.print(f"under QEMU -icount shift={shift} the ticks count instructions ({per_tick:,.0f} "
                  f"per tick), exactly: a ranking of instruction counts, not of time on a real "
                  f"chip")
    table = Table()
    for column, right in (("operator signature", False), ("ops", True), ("candidates", False),
                          ("best", False), ("speed-up over the reference", True)):
        table.add_column(column, justify="right" if right else "left")
    for m in report.measured:
        cells = []
        for c in m.candidates:
            if c.correct:
                cells.append(f"{c.variant} {c.ticks:,}{_cost(m, c)}")
            elif c.problem.startswith("its copy"):
                cells.append(f"{c.variant} does not fit")
            else:
                cells.append(f"{c.variant} wrong")
        best = m.best
        table.add_row(escape(short_signature(m.signature)), str(1 + m.also), "\n".join(cells),
                      best.variant if best else "-", speedup(m))
    out.print(table)
    budget = ("" if report.max_flash is None
              else f" (--max-flash: at most {report.max_flash:,} bytes)")
    out.print(f"the chosen variants' weights: {report.flash_growth:+,} bytes over the default "
              f"kernels'{budget}")
    for note in report.notes:
        out.print(f"[yellow]{escape(note)}[/]")
    for m in report.measured:
        if m.why and m.best and m.fastest:
            out.print(f"{escape(short_signature(m.signature))}: {m.best.variant} chosen, not the "
                      f"fastest {m.fastest.variant} ({escape(m.why)})")
    wrong = [(m, c) for m in report.measured for c in m.candidates if c.correct is False]
    for m, c in wrong:
        out.print(f"[yellow]{c.variant} is not bit-exact on {escape(short_signature(m.signature))}"
                  f" ({c.problem}); it was not chosen[/]")
    out.print(f"tuning log: {report.log} (use it with --tuning {report.log})", soft_wrap=True)
    return 0


def _cost(measured, candidate) -> str:
    """`` (weights 2.5 KiB +1.2 KiB, scratch 604 B)`` for a candidate's table cell."""
    from microbuild.units import kib
    from microbuild.tuning.costs import growth

    if candidate.flash is None:
        return ""
    grown = growth(measured, candidate)
    change = "" if not grown else f" {'+' if grown > 0 else '-'}{kib(abs(grown))}"
    return f" (weights {kib(candidate.flash)}{change}, scratch {kib(candidate.scratch or 0)})"


def add_parser(commands) -> None:
    p = commands.add_parser("tune", help="time every kernel variant of the model's operators "
                                         "on the board and log the fastest correct one")
    p.add_argument("--board", help="board name or board YAML file (default: microbuild.yaml's)")
    p.add_argument("--model", action="append",
                   help=".tflite model (repeat for several; one log serves them all; default: "
                        "microbuild.yaml's)")
    p.add_argument("--log",
                   help="tuning log to write, merged with what it holds (default: the models' "
                        "`tuning:` in microbuild.yaml, else tune.json beside it or here)")
    p.add_argument("--trials", type=int,
                   help="candidates timed per operator signature, the reference included "
                        "(default: every legal variant)")
    p.add_argument("--repeat", type=int, default=5,
                   help="timed runs per candidate; the median counts (default: 5)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed runs before timing each candidate (default: 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the input the check uses")
    p.add_argument("--runner", help="how to start or flash the board (default: its first)")
    p.add_argument("--port", help="real boards: serial port or HOST:PORT")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD-tune)")
    p.add_argument("--toolchain", help="one of the board's toolchain families")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each reply before resending (default: 10)")
    p.add_argument("--max-flash", metavar="BYTES|PCT",
                   help="flash the chosen variants' weights may add over the default kernels' "
                        "(bytes, e.g. 0 or 16k, or a percentage of the default weights, e.g. "
                        "10%%); the log records the fastest choices within it")
    p.add_argument("--no-fit-check", action="store_true",
                   help="do not build the tuned firmware to check that it fits the board")
    p.add_argument("--allow-float-reorder", action="store_true",
                   help="also measure float kernels that add their sums in another order than "
                        "TFLM (Helium float lanes; NOT bit-exact): each is checked against the "
                        "exact kernel within a float tolerance, and builds use the log's choice "
                        "only with --allow-float-reorder too")
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    p.set_defaults(func=cmd_tune)
