"""What build, run and flash share: building incrementally with a progress line, the build
folder's default name, and rendering fit reports, outputs and profiles."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from microbuild import api
from microbuild.cli.console import NoStatus, err, out
from microbuild.cli.kernel_options import kernel_options
from microbuild.errors import MicrobuildError
from microbuild.manifest import build_options


def render_fit(build) -> None:
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


def render_outputs(name: str, arrays) -> None:
    table = Table(title=f"model {name}", title_justify="left")
    for column in ("output", "dtype", "shape", "values"):
        table.add_column(column)
    for k, array in enumerate(arrays):
        flat = array.reshape(-1)
        shown = " ".join(str(v) for v in flat[:32]) + (" ..." if flat.size > 32 else "")
        table.add_row(str(k), str(array.dtype), str(list(array.shape)), shown)
    out.print(table)


def render_result(result, board) -> None:
    from microbuild.device.timing import duration

    for name, arrays in result.outputs.items():
        render_outputs(name, arrays)
        ticks = result.ticks.get(name)
        if ticks is not None:
            out.print(f"{name}: {ticks:,} timer ticks per inference at {result.timer_hz:,} Hz = "
                      f"{duration(ticks, result.timer_hz, board)}")


def render_profile(profile, board) -> None:
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


def default_out_dir(board: str, executor: str) -> Path:
    # A board given as a YAML file builds into build/<file name without .yaml> by default; an
    # RPC firmware into build/<board>-rpc, so it does not replace the AOT one.
    name = Path(board).stem if board.endswith((".yaml", ".yml")) else board
    return Path("build") / (name if executor == "aot" else f"{name}-{executor}")


def build_incrementally(args: argparse.Namespace, executor: str, input_file: str | None):
    """Build (incrementally) with a one-line progress display on a terminal."""
    out_dir = Path(args.out_dir or default_out_dir(args.board, executor))
    quiet = args.json or not err.is_terminal
    with err.status(f"building for {args.board}...", spinner="dots") if not quiet \
            else NoStatus() as status:
        def progress(line: str) -> None:
            if args.verbose:
                err.print(escape(line), highlight=False)
            elif status is not None:
                status.update(f"building for {args.board}: {escape(line.strip())}")
        options = {"models": args.model, **build_options(args), **kernel_options(args)}
        models = options.pop("models")
        return api.build_firmware(args.board, models, out_dir, executor=executor,
                                  toolchain=args.toolchain, input=input_file, seed=args.seed,
                                  jobs=args.jobs, progress=progress, **options)


def run_app(build, runner: str | None, timeout: float) -> int:
    """Run your own application (executor app) to its end, print its console as it is and
    return its exit status."""
    if not build.board.is_host:
        err.print(f"running {build.elf.name} on {build.board.name}...")
    run = api.run_app(build, runner=runner, timeout=timeout)
    out.print(escape(run.console), end="", highlight=False, soft_wrap=True)
    if run.status != 0:
        err.print(f"[yellow]{build.board.name}: your application exited with status "
                  f"{run.status}[/]")
    return run.status


def save_outputs(path: str, build, outputs: dict[str, list]) -> None:
    """--output: one model's outputs as .npy/.npz; several models' in one .npz keyed
    <model>.output<k>."""
    from microbuild.tensor_files import save_model_outputs, save_tensors

    if len(build.models) == 1:
        model = build.models[0]
        save_tensors(path, outputs[model["prefix"]], output_specs(model))
    else:
        save_model_outputs(path, {m["prefix"]: outputs[m["prefix"]] for m in build.models})


def output_specs(model):
    from microbuild.compiler.codegen import TensorSpec

    return [TensorSpec(**{k: (tuple(v) if k == "shape" else v) for k, v in o.items()})
            for o in model["outputs"]]


def check_output_name(path: str | None) -> None:
    if path and Path(path).suffix not in (".npy", ".npz"):
        raise MicrobuildError(f"--output {path}: name it .npy (one output) or .npz "
                              "(several outputs)")
