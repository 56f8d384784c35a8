"""What the commands build, run, flash, monitor, debug and clean share (this module is no
command): building incrementally with a progress line, choosing the firmware to run, their
common arguments, and rendering fit reports, outputs and profiles."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from microbuild import api
from microbuild.cli.console import NoStatus, err, out
from microbuild.cli.kernel_options import kernel_options
from microbuild.errors import MicrobuildError
from microbuild.manifest import build_options, default_out_dir


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
    from microbuild.firmware.fit import split_lines

    for line in split_lines(build.size.get("workspaces", [])):  # a workspace split by region
        out.print(line, markup=False, highlight=False)


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


def profile_rows(profile, summary) -> list[dict]:
    """Each profiled operator with its kernel variant and MACs from the compiler's summary (the
    operator's index in the generated code is ``op_index``)."""
    ops = {op["index"]: op for op in (summary or {}).get("ops", [])}
    rows = []
    for o in profile.ops:
        op = ops.get(o.op_index, {})
        macs = op.get("macs", 0)
        rows.append({"index": o.index, "op_index": o.op_index, "opcode": o.opcode,
                     "ticks": o.ticks, "kernel": op.get("kernel", ""), "macs": macs,
                     "macs_per_tick": macs / o.ticks if macs and o.ticks else None})
    return rows


def render_profile(profile, board, summary=None) -> None:
    from microbuild.device.timing import duration

    def column(ticks: int) -> tuple[str, str]:  # instructions under QEMU icount, else ms
        return duration(ticks, profile.timer_hz, board).column()

    # The title on a line of its own: a table title is cut to the table's width.
    out.print(f"{profile.model} on {profile.board}: timer ticks per operator, run from the host "
              f"(timer {profile.timer_hz:,} Hz)")
    table = Table()
    for heading, right in (("#", True), ("operator", False), ("variant", False), ("MACs", True),
                           ("ticks", True), (column(0)[0], True), ("MACs/tick", True),
                           ("share", True)):
        table.add_column(heading, justify="right" if right else "left")
    total = profile.op_ticks or 1
    for row in profile_rows(profile, summary):
        table.add_row(str(row["index"]), row["opcode"], row["kernel"],
                      f"{row['macs']:,}" if row["macs"] else "", f"{row['ticks']:,}",
                      column(row["ticks"])[1],
                      f"{row['macs_per_tick']:.2f}" if row["macs_per_tick"] else "",
                      f"{100 * row['ticks'] / total:.1f}%")
    macs = sum(op.get("macs", 0) for op in (summary or {}).get("ops", []))
    table.add_row("", "sum of operators", "", f"{macs:,}" if macs else "",
                  f"{profile.op_ticks:,}", column(profile.op_ticks)[1],
                  f"{macs / profile.op_ticks:.2f}" if macs and profile.op_ticks else "", "")
    table.add_row("", "whole model (RUN)", "", "", f"{profile.model_ticks:,}",
                  column(profile.model_ticks)[1],
                  f"{macs / profile.model_ticks:.2f}" if macs and profile.model_ticks else "",
                  f"{100 * profile.ratio:.1f}%")
    out.print(table)


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
        build = api.build_firmware(args.board, models, out_dir, executor=executor,
                                   toolchain=args.toolchain, input=input_file, seed=args.seed,
                                   jobs=args.jobs, progress=progress,
                                   separate_workspace=separate_workspace(args),
                                   row_stream=not getattr(args, "no_row_stream", False), **options)
    # flash, monitor, debug and run --no-flash act on the board's last build.
    from microbuild.firmware import last_build

    last_build.record(build, records_root(args))
    return build


def records_root(args: argparse.Namespace) -> Path:
    """Where the last build per board is recorded: the manifest's build_dir, else ./build."""
    from microbuild.firmware import last_build

    manifest = getattr(args, "manifest", None)
    return Path(manifest.build_dir) if manifest is not None else last_build.BUILD_ROOT


def apply_manifest_board(args: argparse.Namespace) -> None:
    """flash, monitor, debug and clean take the board (and its folders, the build folder) from
    microbuild.yaml, not its models: they act on the board's last build unless --model says
    to build now."""
    from microbuild.manifest import apply_manifest, require

    given = {k: getattr(args, k) for k in ("model", "out_dir") if hasattr(args, k)}
    apply_manifest(args)
    for key, value in given.items():
        setattr(args, key, value)
    require(args, "board")


def add_workspace_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--separate-workspace", action="append", default=[], metavar="MODEL",
                   help="several models share one workspace, the size of the largest (they run "
                        "one at a time); give this model (its C prefix or .tflite path) a "
                        "workspace of its own (repeatable; '*' for every model)")


def add_row_stream_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-row-stream", action="store_true",
                   help="run every operator whole, even where running the first convolutions "
                        "row by row would need a smaller workspace (faster, more RAM; "
                        "`microbuild compile --board B MODEL` shows both workspaces)")


def separate_workspace(args: argparse.Namespace) -> list[str] | bool:
    """--separate-workspace as build_firmware's ``separate_workspace``."""
    items = getattr(args, "separate_workspace", None) or []
    return True if "*" in items else list(items)


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
    from microbuild.compiler.compiled_model import TensorSpec

    return [TensorSpec(**{k: (tuple(v) if k == "shape" else v) for k, v in o.items()})
            for o in model["outputs"]]


def check_output_name(path: str | None) -> None:
    if path and Path(path).suffix not in (".npy", ".npz"):
        raise MicrobuildError(f"--output {path}: name it .npy (one output) or .npz "
                              "(several outputs)")


# --- the firmware flash, monitor, debug and run --firmware act on ------------------------------

@dataclass
class ChosenFirmware:
    """An ELF on disk and what is known about it."""

    board: object  # the Board it is for
    elf: Path
    note: object  # its FirmwareNote, or None (no note: not built by this microbuild)
    build: object  # a FirmwareBuild when its build folder is intact, else None
    built_at: float  # the last build's time, or the ELF's modification time
    how: str  # how it was chosen, for the summary line

    @property
    def executor(self) -> str | None:
        return self.note.executor if self.note else None

    def describe(self) -> list[str]:
        """The lines printed before flashing / starting it."""
        import time

        models = (", ".join(m["prefix"] + (f" ({m['model']})" if m.get("model") else "")
                            for m in self.build.models) if self.build
                  else ", ".join(self.note.models) if self.note else "unknown")
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.built_at))
        lines = [f"board:    {self.board.name}",
                 f"models:   {models}",
                 f"executor: {self.executor or 'unknown'}"
                 + (f" ({self.note.toolchain}, build {self.note.build_id})" if self.note else ""),
                 f"elf:      {self.elf}",
                 f"built:    {when} ({self.how})"]
        if self.note is None:
            lines.append(f"note:     {self.elf.name} has no .note.microbuild section (built by "
                         "another tool or an older microbuild): its board cannot be checked")
        return lines

    def check_board(self, force: bool) -> None:
        """Refuse a firmware built for another board (``force``: go ahead anyway)."""
        if self.note is None or self.note.board == self.board.name:
            return
        if force:
            err.print(f"[yellow]warning:[/] {escape(str(self.elf))} was built for board "
                      f"'{escape(self.note.board)}', not '{escape(self.board.name)}'; going "
                      "ahead because of --force")
            return
        raise MicrobuildError(f"{self.elf} was built for board '{self.note.board}', not "
                              f"'{self.board.name}': refusing it. Build for {self.board.name} "
                              f"(`microbuild build --board {self.board.name} ...`), or pass "
                              "--force if the two boards really are the same hardware")


def _chosen(board, elf: Path, how: str, built_at: float | None = None) -> ChosenFirmware:
    from microbuild.firmware.last_build import firmware_at
    from microbuild.firmware.note import read_note

    note = read_note(elf)
    build = firmware_at(elf, board) if note else None
    return ChosenFirmware(board, elf, note, build,
                          built_at if built_at is not None else elf.stat().st_mtime, how)


def choose_firmware(args: argparse.Namespace, board, build_executor: str | None = None
                    ) -> ChosenFirmware:
    """--firmware F; or, with --model and ``build_executor``, a build made now; or what the last
    `build` for the board produced (-o DIR: the firmware in DIR)."""
    from microbuild.firmware import last_build

    if getattr(args, "firmware", None):
        path = Path(args.firmware)
        if not path.is_file():
            raise MicrobuildError(f"--firmware {path}: no such file")
        return _chosen(board, path, "--firmware")
    if getattr(args, "model", None) and build_executor:
        build = build_incrementally(args, build_executor, None)
        return _chosen(board, build.elf, "built now")
    if getattr(args, "out_dir", None):
        folder = Path(args.out_dir)
        for candidate in (folder / "firmware.elf", folder / "firmware"):
            if candidate.is_file():
                return _chosen(board, candidate, f"in {folder}")
        raise MicrobuildError(f"no firmware in {folder} (looked for firmware.elf and firmware)")
    root = records_root(args)
    last = last_build.find(board.name, root)
    if last is None:
        # Built before builds were recorded: the newest firmware in the board's build folders.
        found = [elf for executor in ("aot", "rpc")
                 for folder in {default_out_dir(args.board, executor),
                                default_out_dir(board.name, executor)}
                 for elf in (folder / "firmware.elf", folder / "firmware") if elf.is_file()]
        if found:
            newest = max(found, key=lambda p: p.stat().st_mtime)
            return _chosen(board, newest, "the newest in build/; no build recorded")
        raise MicrobuildError(
            f"no firmware built for {board.name} here (nothing recorded in "
            f"{last_build.record_path(board.name, root)}): build one (`microbuild build --board "
            f"{board.name} --model M.tflite [--executor rpc]`) or pass --firmware FILE")
    return _chosen(board, last.elf, "the last build", last.built_at)
