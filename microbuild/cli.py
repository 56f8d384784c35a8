"""The `microbuild` command: parses arguments, calls microbuild.api, renders the result.

No logic lives here that a Python user could not reach through the API. A user's mistake
(MicrobuildError) is printed as one clear message and exit code 1; argparse usage errors exit 2.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from microbuild import __version__, api
from microbuild.boards import format_size
from microbuild.errors import MicrobuildError
from microbuild.cli_kernels import add_kernel_arguments, kernel_options

# Piped output (CI logs, files) gets a wide fixed width instead of rich's 80 columns, so tables are
# not truncated.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


# --- boards ------------------------------------------------------------------------------------

def cmd_boards_list(args: argparse.Namespace) -> int:
    boards = api.list_boards()
    table = Table(title=f"{len(boards)} boards", title_justify="left")
    for column in ("name", "core", "flash", "RAM", "toolchain", "default runner", "emulated"):
        table.add_column(column)
    for b in boards:
        emulated = "native" if b.is_host else ("yes" if b.is_emulated else "no")
        table.add_row(b.name, b.core, format_size(b.flash_bytes) if b.flash_bytes else "-",
                      format_size(b.ram_bytes) if b.ram_bytes else "-", b.toolchain.family,
                      b.default_runner, emulated)
    out.print(table)
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
    print(f"wrote {path} (extends {args.base}); edit it, then `microbuild boards validate {path}`")
    return 0


# --- compile -----------------------------------------------------------------------------------

def cmd_compile(args: argparse.Namespace) -> int:
    from microbuild.firmware.build import resolve_board
    from microbuild.compiler import compile_model
    from microbuild.compiler.variants import Selection, Target
    from microbuild.tuning import TuningLog

    options = kernel_options(args)
    target = Target.of_board(resolve_board(args.board)) if args.board else Target()
    tuning = TuningLog.load(options["tuning"]) if "tuning" in options else None
    selection = Selection(target, tuning=tuning, force=options.get("variants", {}))
    compiled = compile_model(Path(args.model), prefix=args.prefix, selection=selection)
    written = compiled.write(Path(args.output))
    if args.plan_svg:
        Path(args.plan_svg).write_text(compiled.plan_svg(), encoding="utf-8")
    summary = compiled.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    table = Table(title=f"{args.model}: {len(summary['ops'])} operators", title_justify="left")
    # "#" is the operator's place in the generated code (what --variant N and profiles use);
    # "model op" is its index in the .tflite file, shown when folding or fusion moved them apart.
    renumbered = any(op["index"] != op["model_index"] for op in summary["ops"])
    columns = ["#"] + (["model op"] if renumbered else []) + \
        ["operator", "inputs", "outputs", f"kernel ({target.cpu})"]
    for column in columns:
        table.add_column(column)
    for op in summary["ops"]:
        model_op = [", ".join(map(str, op.get("fused_from", [op["model_index"]])))] \
            if renumbered else []
        table.add_row(str(op["index"]), *model_op, op["opcode"],
                      ", ".join(map(str, op["inputs"])), ", ".join(map(str, op["outputs"])),
                      f"{op['kernel']} ({op['kernel_choice']})")
    out.print(table)
    for note in summary["notes"]:
        out.print(f"note: {note}")
    for op in summary["ops"]:  # no silent fallback: say why a fast kernel did not take an op
        if op["kernel"] == "reference" and op.get("variants_refused"):
            by_reason: dict[str, list[str]] = {}
            for name, why in op["variants_refused"].items():
                by_reason.setdefault(why, []).append(name)
            reasons = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
            out.print(f"op {op['index']} {op['opcode']} runs the reference kernel on "
                      f"{target.cpu}: {reasons}")
    for kind in ("inputs", "outputs"):
        for i, t in enumerate(summary[kind]):
            out.print(f"{kind[:-1]} {i}: {t['dtype']}{list(t['shape'])} scale={t['scale']:.6g} "
                      f"zero_point={t['zero_point']}")
    out.print(f"weights: {summary['weights_bytes']:,} bytes   workspace: {summary['workspace_bytes']:,} bytes")
    out.print("wrote " + ", ".join(str(p) for p in written))
    if args.plan_svg:
        out.print(f"memory plan drawn in {args.plan_svg}")
    return 0


def cmd_platformio_core(args: argparse.Namespace) -> int:
    from microbuild.project.platformio_core import seed_offline_core

    try:
        core = seed_offline_core(args.dir)
    except ImportError:
        raise MicrobuildError("PlatformIO is not installed in microbuild's Python: "
                              f"{sys.executable} -m pip install platformio") from None
    # The message on stderr, the export line alone on stdout: eval "$(microbuild platformio-core)".
    err.print(f"PlatformIO core folder ready, no network needed: {core}")
    print(f"export PLATFORMIO_CORE_DIR={shlex.quote(str(core))} "
          "PLATFORMIO_SETTING_ENABLE_TELEMETRY=No")
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    from microbuild.compiler.op_table import markdown_table, operator_rows

    rows = operator_rows()
    if args.markdown:
        print(markdown_table(rows))
        return 0
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    table = Table(title="TFLite builtin operators (TFLM's set) in microbuild", title_justify="left")
    for column in ("operator", "microbuild", "run-time types", "folded when constant",
                   "fast variants"):
        table.add_column(column)
    for r in rows:
        table.add_row(r.opcode, r.status + ("" if r.in_tflm else " (not in TFLM)"),
                      ", ".join(r.dtypes), "yes" if r.folds else "", ", ".join(r.variants))
    out.print(table)
    return 0


# --- build ------------------------------------------------------------------------------------

def _render_fit(build) -> None:
    # The ELF's path is printed on a line of its own (a table title is cut to the table's width).
    table = Table(title=f"{build.board.name} ({build.toolchain})", title_justify="left")
    from microbuild.firmware.fit import TABLE_HEADER

    for i, column in enumerate(TABLE_HEADER):
        table.add_column(column, justify="right" if i in (1, 2, 3) else "left")
    for row in build.size_rows:
        table.add_row(*row)
    out.print(table)
    totals = build.size.get("totals", {})
    out.print("  ".join(f"{k} {totals[k]:,} B" for k in
                        ("text", "rodata", "weights", "data", "bss", "workspace", "state",
                         "stack") if k in totals and (k != "state" or totals[k])))


def _render_outputs(name: str, arrays) -> None:
    table = Table(title=f"model {name}", title_justify="left")
    for column in ("output", "dtype", "shape", "values"):
        table.add_column(column)
    for k, array in enumerate(arrays):
        flat = array.reshape(-1)
        shown = " ".join(str(v) for v in flat[:32]) + (" ..." if flat.size > 32 else "")
        table.add_row(str(k), str(array.dtype), str(list(array.shape)), shown)
    out.print(table)


def _render_result(result, board) -> None:
    from microbuild.device.timing import duration

    for name, arrays in result.outputs.items():
        _render_outputs(name, arrays)
        ticks = result.ticks.get(name)
        if ticks is not None:
            out.print(f"{name}: {ticks:,} timer ticks per inference at {result.timer_hz:,} Hz = "
                      f"{duration(ticks, result.timer_hz, board)}")


def _default_out_dir(board: str, executor: str) -> Path:
    # A board given as a YAML file builds into build/<file name without .yaml> by default; an
    # RPC firmware into build/<board>-rpc, so it does not replace the AOT one.
    name = Path(board).stem if board.endswith((".yaml", ".yml")) else board
    return Path("build") / (name if executor == "aot" else f"{name}-{executor}")


def _build(args: argparse.Namespace, executor: str, input_file: str | None):
    """Build (incrementally) with a one-line progress display on a terminal."""
    out_dir = Path(args.out_dir or _default_out_dir(args.board, executor))
    quiet = args.json or not err.is_terminal
    with err.status(f"building for {args.board}...", spinner="dots") if not quiet \
            else _nothing() as status:
        def progress(line: str) -> None:
            if args.verbose:
                err.print(escape(line), highlight=False)
            elif status is not None:
                status.update(f"building for {args.board}: {escape(line.strip())}")
        return api.build_firmware(args.board, args.model, out_dir, executor=executor,
                                  toolchain=args.toolchain, input=input_file, seed=args.seed,
                                  jobs=args.jobs, progress=progress, **kernel_options(args))


def _save_outputs(path: str, build, outputs: dict[str, list]) -> None:
    """--output: one model's outputs as .npy/.npz; several models' in one .npz keyed
    <model>.output<k>."""
    from microbuild.tensor_files import save_model_outputs, save_tensors

    if len(build.models) == 1:
        model = build.models[0]
        save_tensors(path, outputs[model["prefix"]], _output_specs(model))
    else:
        save_model_outputs(path, {m["prefix"]: outputs[m["prefix"]] for m in build.models})


def _output_specs(model):
    from microbuild.compiler.codegen import TensorSpec

    return [TensorSpec(**{k: (tuple(v) if k == "shape" else v) for k, v in o.items()})
            for o in model["outputs"]]


def _check_output_name(path: str | None) -> None:
    if path and Path(path).suffix not in (".npy", ".npz"):
        raise MicrobuildError(f"--output {path}: name it .npy (one output) or .npz "
                              "(several outputs)")


def cmd_build(args: argparse.Namespace) -> int:
    if args.output and not args.run:
        raise MicrobuildError("--output saves the outputs of a run: add --run")
    _check_output_name(args.output)
    build = _build(args, args.executor, args.input)
    result = None
    if args.run:
        if not args.json and (build.board.is_host or build.board.is_emulated):
            err.print(f"running on {build.board.name}...")
        result = api.run_firmware(build, timeout=args.timeout)
        if args.output:
            _save_outputs(args.output, build, result.outputs)
    if args.json:
        document = {"board": build.board.name, "toolchain": build.toolchain,
                    "executor": build.executor, "elf": str(build.elf),
                    "bin": str(build.binary) if build.binary else None,
                    "hex": str(build.hex) if build.hex else None,
                    "region_bins": {k: str(v) for k, v in build.region_binaries.items()},
                    "boot_images": [str(p) for p in build.boot_images],
                    "input": str(build.input_file) if build.input_file else None,
                    "size": build.size,
                    "models": [{k: m[k] for k in ("prefix", "model", "workspace_bytes",
                                                  "weights_bytes", "inputs", "outputs")}
                               for m in build.models]}
        if result is not None:
            document["run"] = result.to_dict()
        print(json.dumps(document, indent=2))
        return 0
    _render_fit(build)
    out.print(f"firmware: {build.elf}{build.files_note}",
              soft_wrap=True)
    if result is not None:
        _render_result(result, build.board)
        if args.output:
            out.print(f"outputs saved to {args.output}")
    return 0


# --- run / flash -------------------------------------------------------------------------------

def _render_profile(profile, board) -> None:
    from microbuild.device.timing import duration

    def column(ticks: int) -> tuple[str, str]:  # instructions under QEMU icount, else ms
        return duration(ticks, profile.timer_hz, board).column()

    # The title on a line of its own: a table title is cut to the table's width.
    out.print(f"{profile.model} on {profile.board}: timer ticks per operator, run from the host "
              f"(timer {profile.timer_hz:,} Hz)")
    table = Table()
    for heading, right in (("#", True), ("operator", False), ("ticks", True),
                           (column(0)[0], True), ("share", True)):
        table.add_column(heading, justify="right" if right else "left")
    total = profile.op_ticks or 1
    for o in profile.ops:
        table.add_row(str(o.index), o.opcode, f"{o.ticks:,}", column(o.ticks)[1],
                      f"{100 * o.ticks / total:.1f}%")
    table.add_row("", "sum of operators", f"{profile.op_ticks:,}", column(profile.op_ticks)[1],
                  "")
    table.add_row("", "whole model (RUN)", f"{profile.model_ticks:,}",
                  column(profile.model_ticks)[1], f"{100 * profile.ratio:.1f}%")
    out.print(table)


def cmd_run(args: argparse.Namespace) -> int:
    from microbuild.tensor_files import load_inputs, random_inputs

    _check_output_name(args.output)
    if args.executor == "aot":
        if args.profile:
            raise MicrobuildError("--profile times each operator from the host: it needs "
                                  "--executor rpc (the default)")
        build = _build(args, "aot", args.input)
        result = api.run_firmware(build, runner=args.runner, timeout=args.timeout)
        if args.output:
            _save_outputs(args.output, build, result.outputs)
        if args.json:
            print(json.dumps({"board": build.board.name, "executor": "aot",
                              "elf": str(build.elf), "run": result.to_dict()}, indent=2))
        else:
            _render_result(result, build.board)
        return 0

    from microbuild.device.timing import duration

    build = _build(args, "rpc", None)
    show = not args.json

    def log(line: str) -> None:
        if show:
            err.print(f"[dim]device:[/] {escape(line)}", highlight=False)

    if show:
        err.print(f"starting {build.elf.name} on {build.board.name}...")
    documents = []
    all_outputs: dict[str, list] = {}
    with api.connect(build.board, build, runner=args.runner, port=args.port,
                     timeout=args.timeout, on_log=log) as dev:
        for model in build.models:
            prefix = model["prefix"]
            specs = dev.specs(prefix)
            several = prefix if len(build.models) > 1 else None
            x = (load_inputs(args.input, specs, model=several) if args.input
                 else random_inputs(specs, args.seed))
            if args.profile:
                profile = dev.profile(prefix, x, repeat=args.repeat)
                outputs, ticks = profile.outputs, profile.model_ticks
            else:
                profile = None
                outputs, ticks = dev.run_timed(prefix, x)
            all_outputs[prefix] = outputs
            hz = dev.info.timer_hz
            doc = {"model": prefix, "outputs": [a.tolist() for a in outputs], "ticks": ticks,
                   "timer_hz": hz}
            if profile is not None:
                doc["profile"] = profile.to_dict()
            documents.append(doc)
            if not args.json:
                _render_outputs(prefix, outputs)
                out.print(f"{prefix}: {ticks:,} timer ticks per inference at {hz:,} Hz = "
                          f"{duration(ticks, hz, build.board)} (host-driven, "
                          f"{dev.client.transport.describe()})")
                if profile is not None:
                    _render_profile(profile, build.board)
        stats = dev.client.stats
    if args.output:
        _save_outputs(args.output, build, all_outputs)
    if args.json:
        print(json.dumps({"board": build.board.name, "executor": "rpc", "elf": str(build.elf),
                          "models": documents,
                          "link": {"requests": stats.requests,
                                   "retransmissions": stats.retransmissions}}, indent=2))
    elif args.output:
        out.print(f"outputs saved to {args.output}")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from microbuild.firmware.build import resolve_board
    from microbuild.tuning.tuner import short_signature, tune

    board = resolve_board(args.board)
    show = not args.json

    def progress(line: str) -> None:
        if show:
            err.print(escape(line), highlight=False)

    report = tune(board, args.model, args.log, out_dir=args.out_dir, trials=args.trials,
                  warmup=args.warmup, repeat=args.repeat, runner=args.runner, port=args.port,
                  toolchain=args.toolchain, timeout=args.timeout, seed=args.seed,
                  progress=progress)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    out.print(f"{board.name} ({report.cpu}): median timer ticks per operator call at "
              f"{report.timer_hz:,} Hz")
    table = Table()
    for column, right in (("operator signature", False), ("ops", True), ("candidates", False),
                          ("best", False), ("vs reference", True)):
        table.add_column(column, justify="right" if right else "left")
    for m in report.measured:
        cells = []
        for c in m.candidates:
            cells.append(f"{c.variant} {c.ticks:,}" if c.correct else f"{c.variant} wrong")
        best = m.best
        ratio = (f"{best.ticks / m.reference.ticks:.2f}x" if best and best.ticks is not None
                 and m.reference.ticks else "")
        table.add_row(escape(short_signature(m.signature)), str(1 + m.also), "; ".join(cells),
                      best.variant if best else "-", ratio)
    out.print(table)
    wrong = [(m, c) for m in report.measured for c in m.candidates if c.correct is False]
    for m, c in wrong:
        out.print(f"[yellow]{c.variant} is not bit-exact on {escape(short_signature(m.signature))}"
                  f" ({c.problem}); it was not chosen[/]")
    out.print(f"tuning log: {report.log} (use it with --tuning {report.log})", soft_wrap=True)
    return 0


def _firmware_to_flash(args: argparse.Namespace):
    from microbuild.firmware.build import resolve_board

    board = resolve_board(args.board)
    if args.firmware:
        path = Path(args.firmware)
        if not path.is_file():
            raise MicrobuildError(f"--firmware {path}: no such file")
        return board, path
    if args.model:
        return board, _build(args, args.executor, None).elf
    for executor in ("rpc", "aot"):
        folder = Path(args.out_dir or _default_out_dir(args.board, executor))
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


# --- ci ----------------------------------------------------------------------------------------

def _default_models() -> list[str]:
    """Without --models: microbuild's own test models, but only when run inside microbuild's
    checkout; anywhere else that would silently test models the user never chose."""
    checkout = Path(__file__).resolve().parent.parent
    bundled = checkout / "tests" / "models"
    here = Path.cwd().resolve()
    if bundled.is_dir() and (here == checkout or checkout in here.parents):
        return [str(p) for p in sorted(bundled.glob("*.tflite"))]
    raise MicrobuildError("ci: name the models to build with --models (e.g. --models "
                          "models/*.tflite); without it ci uses microbuild's own test models, "
                          "and only inside microbuild's checkout")


def cmd_ci(args: argparse.Namespace) -> int:
    from microbuild.ci import report

    if args.merge:
        cells = report.merge(args.merge)
    else:
        models = args.models or _default_models()
        toolchains = [t.strip() for t in args.toolchains.split(",")] if args.toolchains else None
        cells = api.plan_ci(args.boards, models, toolchains)
        if args.emit:
            path = api.emit_ci_workflow(cells, args.emit, args.emit_to, baseline=args.baseline,
                                        max_growth=args.max_growth if args.baseline else None,
                                        **kernel_options(args))
            out.print(f"wrote {path}: {len(cells)} cell jobs and a merge job")
            return 0
        pending = sum(1 for c in cells if c.status == "pending")
        show = err.is_terminal and not args.quiet
        with _ci_progress(show, pending) as advance:
            cells = api.run_ci(cells, Path(args.out), jobs=args.jobs,
                               cache=None if args.no_cache else (args.cache or ""),
                               emulate=args.emulate, progress=advance,
                               **kernel_options(args))
    regressions = []
    if args.baseline:
        regressions = report.compare(cells, report.read_cells(args.baseline), args.max_growth)
    if args.json:
        report.write_json(Path(args.json), cells)
    if args.markdown:
        Path(args.markdown).write_text(report.markdown(cells, regressions))
    table = Table(title="microbuild ci", title_justify="left")
    for i, column in enumerate(report.COLUMNS):
        table.add_column(column, justify="right" if 4 <= i <= 9 or i == 11 else "left")
    styles = {"ok": "green", "does-not-fit": "yellow", "not-applicable": "dim", "failed": "bold red"}
    for cell, row in zip(cells, report.table_rows(cells)):
        table.add_row(*row[:10], f"[{styles.get(cell.status, '')}]{row[10]}[/]", row[11])
    out.print(table)
    counts = report.summary_counts(cells)
    out.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    for cell in cells:
        if cell.status == "failed":
            err.print(f"[bold red]failed:[/] {cell.board} / {cell.toolchain} / {cell.model}: "
                      f"{escape(cell.message.strip())}", soft_wrap=True)
    for g in regressions:
        err.print(f"[bold red]grew:[/] {' / '.join(g.key)}: {g.field} {g.before:,} -> {g.after:,} "
                  f"(+{g.after - g.before:,} B, {g.percent:+.1f}%) over --max-growth "
                  f"{args.max_growth}", soft_wrap=True)
    return 1 if counts["failed"] or regressions else 0


class _ci_progress:
    """A progress bar over SCons' build steps (a step per line it prints), or nothing."""

    def __init__(self, show: bool, cells: int):
        self.show, self.cells = show, cells

    def __enter__(self):
        if not self.show:
            return lambda line: None
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.total} steps"),
                                 TimeElapsedColumn(), console=err, transient=True)
        self.progress.__enter__()
        # Roughly 10 steps per cell plus its share of the runtime: a guess, corrected at the end.
        task = self.progress.add_task(f"building {self.cells} cells", total=self.cells * 10)

        def advance(line: str) -> None:
            if line.startswith("  ") and not line.startswith("   "):
                self.progress.advance(task)
                self.progress.update(task, description=f"building: {line.split()[-1][-48:]}")
        return advance

    def __exit__(self, *exc):
        if self.show:
            self.progress.__exit__(*exc)
        return False


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# --- parser ------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="microbuild",
        description="Compile int8 TFLite models to C and build, flash and run them on microcontroller "
                    "boards described in YAML.")
    parser.add_argument("--version", action="version", version=f"microbuild {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    p = commands.add_parser("compile", help="compile an int8 .tflite model to C")
    p.add_argument("model", help="the .tflite file")
    p.add_argument("-o", "--output", default="out", help="folder for the generated C (default: out)")
    p.add_argument("--prefix", default="model", help="prefix of every generated symbol (default: model)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--plan-svg", metavar="FILE", help="draw the memory plan as an SVG picture")
    p.add_argument("--board", help="choose kernel variants for this board's CPU (default: "
                                   "portable C only)")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_compile)

    p = commands.add_parser("platformio-core",
                            help="seed a PlatformIO core folder so `pio run` needs no network")
    p.add_argument("dir", nargs="?", default=str(Path.home() / ".cache" / "microbuild" /
                                                 "platformio-core"),
                   help="the folder (default: ~/.cache/microbuild/platformio-core)")
    p.set_defaults(func=cmd_platformio_core)

    p = commands.add_parser("ops", help="every TFLM operator and what microbuild does with it")
    p.add_argument("--markdown", action="store_true", help="as the README's Markdown table")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=cmd_ops)

    p = commands.add_parser("build", help="build a firmware for a board (and run it with --run)")
    p.add_argument("--board", required=True, help="board name (see `microbuild boards list`) or a "
                                                  "board YAML file")
    p.add_argument("--model", required=True, action="append",
                   help=".tflite model (repeat for several models in one firmware)")
    p.add_argument("--executor", default="aot", choices=["aot", "rpc"],
                   help="aot: standalone firmware that runs the model once and exits; rpc: a "
                        "server the host drives (see `microbuild run`)")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD)")
    p.add_argument("--toolchain", help="one of the board's toolchain families, e.g. clang "
                                       "(default: the board's first)")
    p.add_argument("--input", help=".npy/.npz input embedded in the firmware (default: random, "
                                   "seeded by --seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--run", action="store_true",
                   help="boot it in the emulator (or as a host process) and print the outputs")
    p.add_argument("--output", help="with --run: save the outputs (.npy, or .npz for several; "
                   "several models: one .npz keyed <model>.output<k>)")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds to wait for the run to finish (default: 300)")
    p.add_argument("--json", action="store_true", help="print sizes (and the run) as JSON")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_build)

    p = commands.add_parser("run", help="build if needed, start the firmware on the board and "
                                        "run the model from the host; --profile times each "
                                        "operator")
    p.add_argument("--board", required=True, help="board name or board YAML file")
    p.add_argument("--model", required=True, action="append",
                   help=".tflite model (repeat for several)")
    p.add_argument("--executor", default="rpc", choices=["rpc", "aot"],
                   help="rpc (default): the host drives the model over the console; aot: the "
                        "standalone firmware runs on an input embedded at build time")
    p.add_argument("--input", help=".npy/.npz input (default: random, seeded by --seed); several "
                   "models: one .npz keyed <model>.input<k>")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default: 0)")
    p.add_argument("--output", help="save the outputs (.npy, or .npz for several; several "
                   "models: one .npz keyed <model>.output<k>)")
    p.add_argument("--profile", action="store_true",
                   help="run operator by operator and print ticks per operator")
    p.add_argument("--repeat", type=int, default=1,
                   help="with --profile: timed runs per operator, the median is shown")
    p.add_argument("--runner", help="how to start or flash the board (default: its first "
                                    "`flash:` runner)")
    p.add_argument("--port", help="real boards: serial port (default: found from the board's "
                                  "USB ids) or HOST:PORT for TCP")
    p.add_argument("-o", "--out-dir", help="build folder (default: build/BOARD-rpc)")
    p.add_argument("--toolchain", help="one of the board's toolchain families")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each reply before resending (default: 10)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every build step")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_run)

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
    p.set_defaults(func=cmd_flash)

    p = commands.add_parser("tune", help="time every kernel variant of the model's operators "
                                         "on the board and log the fastest correct one")
    p.add_argument("--board", required=True, help="board name or board YAML file")
    p.add_argument("--model", required=True, action="append",
                   help=".tflite model (repeat for several; one log serves them all)")
    p.add_argument("--log", default="tune.json",
                   help="tuning log to write, merged with what it holds (default: tune.json)")
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
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    p.set_defaults(func=cmd_tune)

    from microbuild.project.command import add_generate_parser

    add_generate_parser(commands)

    p = commands.add_parser("ci", help="build every (board, toolchain, model) cell and tabulate "
                                       "sizes; compare with a baseline; emit a CI workflow")
    p.add_argument("--boards", default="all", help="'all' or comma-separated names/globs "
                                                   "(e.g. 'mps2-*,host')")
    p.add_argument("--toolchains", help="comma-separated families (default: every one each "
                                        "board lists)")
    p.add_argument("--models", nargs="+", metavar="FILE",
                   help=".tflite models (default: the test models in tests/models)")
    p.add_argument("-j", "--jobs", type=int, help="parallel jobs (default: CPU count)")
    p.add_argument("--out", default="build/ci", help="build folder (default: build/ci)")
    p.add_argument("--cache", default=None,
                   help="SCons build cache shared across runs (default: "
                        "~/.cache/microbuild/scons-cache)")
    p.add_argument("--no-cache", action="store_true", help="build without the shared cache")
    p.add_argument("--emulate", action="store_true",
                   help="also run cells of emulated boards and the host, and compare with TFLM")
    p.add_argument("--baseline", help="earlier --json file: fail when a cell grew")
    p.add_argument("--max-growth", default="0",
                   help="allowed growth per size: bytes (256), percent (2%%) or both (256,2%%); "
                        "default 0: any growth fails")
    p.add_argument("--json", metavar="FILE", help="write the cells as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    p.add_argument("--merge", nargs="+", metavar="FILE",
                   help="don't build: merge per-cell JSON files (ci --json or build --json)")
    p.add_argument("--emit", choices=["github-actions", "gitlab"],
                   help="write a CI workflow with a job per cell instead of building")
    p.add_argument("--emit-to", metavar="FILE", help="where --emit writes (default: "
                   ".github/workflows/microbuild-ci.yml or .gitlab-ci.yml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_ci)
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


if __name__ == "__main__":
    sys.exit(main())
