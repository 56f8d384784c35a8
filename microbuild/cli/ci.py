"""`microbuild ci`: build every (board, toolchain, model) cell, tabulate sizes, compare with a
baseline, or emit a CI workflow."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

import microbuild
from microbuild import api
from microbuild.cli.console import err, out
from microbuild.cli.kernel_options import add_kernel_arguments, kernel_options
from microbuild.errors import MicrobuildError


def _default_models() -> list[str]:
    """Without --models: microbuild's own test models, but only when run inside microbuild's
    checkout; anywhere else that would silently test models the user never chose."""
    checkout = Path(microbuild.__file__).resolve().parent.parent
    bundled = checkout / "tests" / "models"
    here = Path.cwd().resolve()
    if bundled.is_dir() and (here == checkout or checkout in here.parents):
        return [str(p) for p in sorted(bundled.glob("*.tflite"))]
    raise MicrobuildError("ci: name the models to build with --models (e.g. --models "
                          "models/*.tflite); without it ci uses microbuild's own test models, "
                          "and only inside microbuild's checkout")


def cmd_ci(args: argparse.Namespace) -> int:
    from microbuild.ci import report

    if args.install and not args.emit:
        raise MicrobuildError("ci --install names where an emitted workflow gets microbuild; "
                              "use it with --emit github-actions|gitlab")
    if args.merge:
        cells = report.merge(args.merge)
    else:
        models = args.models or _default_models()
        toolchains = [t.strip() for t in args.toolchains.split(",")] if args.toolchains else None
        cells = api.plan_ci(args.boards, models, toolchains)
        if args.emit:
            path = api.emit_ci_workflow(cells, args.emit, args.emit_to, baseline=args.baseline,
                                        max_growth=args.max_growth if args.baseline else None,
                                        install=args.install, emulate=args.emulate,
                                        **kernel_options(args))
            out.print(f"wrote {path}: a matrix of {len(cells)} cells and a merge job")
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


def add_parser(commands) -> None:
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
                   help="write a CI workflow (a matrix entry per cell) instead of building")
    p.add_argument("--install", metavar="SOURCE",
                   help="with --emit: where the CI jobs get microbuild: a requirement "
                        "(microbuild-mcu==X), a git URL or a path in the repository (default: "
                        f"microbuild-mcu=={microbuild.__version__} from PyPI)")
    p.add_argument("--emit-to", metavar="FILE", help="where --emit writes (default: "
                   ".github/workflows/microbuild-ci.yml or .gitlab-ci.yml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_kernel_arguments(p)
    p.set_defaults(func=cmd_ci)
