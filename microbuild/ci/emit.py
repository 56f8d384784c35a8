"""Hand the CI matrix to a distributed CI engine: a GitHub Actions workflow or a GitLab CI file
whose cell job is a matrix (one entry per cell) followed by a merge job that builds the size table.

Layout (the same for both engines):

* one cell job with a matrix entry per cell (GitHub ``strategy.matrix.include``, GitLab
  ``parallel: matrix``); an entry only sets variables (MB_BOARD, MB_TOOLCHAIN, MB_MODEL_FILE,
  MB_SLUG, MB_PACKAGES, MB_EMULATE), so every cell runs the same literal shell commands, which
  use those variables and no engine expressions;
* each cell job installs the Debian packages of its toolchain (and QEMU or simavr for an
  ``--emulate`` cell), with the downloaded .deb files kept in a cached folder, then microbuild
  from the source the user chose (``--install``: a requirement such as
  ``microbuild-mcu==0.1.0``, a git URL or a path in the repository; default: this version of
  microbuild-mcu from PyPI) with pip's cache kept too, then runs ``microbuild ci`` restricted to
  its one cell, which writes ``out/<cell id>/cell.json`` (a JSON list of one cell) and exits 0 for
  ok, does-not-fit and not-applicable, 1 for a real failure (``--emulate`` cells also run under
  QEMU and are compared with TFLM);
* if the job stops before that file exists (apt or pip failed), a step that always runs writes a
  cell with status "failed", so the cell is in the table rather than silently missing;
* the cell's row goes to the job summary (GitHub) or the job log (GitLab);
  out/<cell id>/cell.json, its ci.log and cells/ (ELF, size report, generated C) are uploaded as
  the artifact cell-<cell id>, even when the job failed;
* the merge job waits for every cell, runs even when some failed (not when cancelled), collects
  every cell.json and runs ``microbuild ci --merge``, which writes table.md/table.json and fails
  when a cell failed (or regressed against ``--baseline``); the table goes to the job summary
  (GitHub) or is an artifact exposed in merge requests as "size table" (GitLab).

The output is deterministic: the same cells (in the same order) give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shlex
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

import yaml

import microbuild
from microbuild.firmware.toolchains import debian_packages
from microbuild.ci.cells import Cell
from microbuild.ci.matrix import EXECUTORS
from microbuild.errors import MicrobuildError
from microbuild.boards import load_board
from microbuild.device.runners.qemu import debian_package, qemu_program

WORKFLOW_NAME = "microbuild ci"
DISTRIBUTION = "microbuild-mcu"  # microbuild's name on PyPI ("microbuild" there is another project)
OUT_DIR = "out"  # each cell job builds into out/<cell id>/
CELL_JOB = "cells"
MERGE_JOB = "merge"
TABLE_MD = "table.md"
TABLE_JSON = "table.json"
GITLAB_IMAGE = "debian:12"
GITHUB_RUNNER = "ubuntu-latest"
# The most entries one matrix job may have: GitHub allows 256 per job; GitLab's CI schema allows
# 50 per parallel:matrix (older GitLab's limit; newer ones take 200 jobs). Longer matrices are
# split over cells, cells-2, ...
GITHUB_MATRIX_MAX = 256
GITLAB_MATRIX_MAX = 50
# The package that compares an --emulate cell's outputs with TFLM's.
EMULATE_PIP = "tflite-micro"

# Pinned major versions of the GitHub actions the workflow uses.
CHECKOUT = "actions/checkout@v4"
SETUP_PYTHON = "actions/setup-python@v5"
CACHE = "actions/cache@v4"
UPLOAD = "actions/upload-artifact@v4"
DOWNLOAD = "actions/download-artifact@v4"

_JOB_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# What may appear in a matrix value: it is written into JSON by printf and into shell words.
_JSON_SAFE = re.compile(r'^[^"\\\x00-\x1f]*$')


# --- what every engine shares ------------------------------------------------------------------

def job_slugs(cells: list[Cell]) -> list[str]:
    """One id per cell, safe as a GitHub job id (after "cell-"), a GitLab job name, an artifact
    name and a folder name: the cell id with anything but letters, digits, '_' and '-' replaced
    by '_'. Cells whose ids collide that way get a short hash of their key appended, so ids stay
    unique and do not depend on the cells' order."""
    if not cells:
        raise MicrobuildError("no cells: the matrix is empty")
    keys = Counter(cell.key for cell in cells)
    repeated = sorted(k for k, n in keys.items() if n > 1)
    if repeated:
        raise MicrobuildError("cells repeated in the matrix: "
                              + ", ".join(":".join(k) for k in repeated))
    base = [_JOB_ID_UNSAFE.sub("_", cell.cell_id) for cell in cells]
    clashes = Counter(base)
    return [b if clashes[b] == 1 else f"{b}-{_digest(c)}" for b, c in zip(base, cells)]


def _digest(cell: Cell) -> str:
    return hashlib.sha1("\0".join(cell.key).encode()).hexdigest()[:8]


def model_file(cell: Cell, models_root: str = ".",
               checkout: str | os.PathLike | None = None) -> str:
    """The cell's model as a CI job names it: a path relative to the checkout, in front of which
    ``models_root`` goes.

    A relative model_path is taken as relative to the checkout; an absolute one (what
    `microbuild ci` plans) is made relative to ``checkout`` (default: the current directory, the
    repository the workflow is written into) and must lie inside it, else no CI job could find
    it; no model_path means ``<model>.tflite``. ``models_root`` is "." normally; an absolute path
    makes the jobs runnable in another folder (the tests run them in a temporary one)."""
    if not cell.model_path:
        rel = f"{cell.model}.tflite"
    elif PurePosixPath(cell.model_path).is_absolute() or Path(cell.model_path).is_absolute():
        root = Path(checkout if checkout is not None else Path.cwd()).resolve()
        try:
            rel = Path(cell.model_path).resolve().relative_to(root).as_posix()
        except ValueError:
            raise MicrobuildError(f"model {cell.model_path} is outside the checkout {root}: a CI "
                                  "job could not find it; put it in the repository") from None
    else:
        rel = cell.model_path.replace("\\", "/")
    return posixpath.normpath(posixpath.join(models_root, rel))


def install_source(spec: str | None = None) -> str:
    """What pip installs in every job, as the user gave it to ``--install``:

    * nothing: this version of microbuild from PyPI, ``microbuild-mcu==<version>``;
    * a requirement (``microbuild-mcu==0.2.0``, ``microbuild-mcu>=0.1``);
    * a git URL (``git+https://host/owner/microbuild.git@v0.2.0``; ``https://….git`` gets the
      ``git+`` pip needs);
    * a path inside the repository (``./vendor/microbuild``, ``.``), written with a leading ./
      so pip takes it as a folder, not a name."""
    if spec is None or not spec.strip():
        return f"{DISTRIBUTION}=={microbuild.__version__}"
    spec = spec.strip()
    if spec.startswith("git@"):  # scp-like git@host:owner/repo.git
        return "git+ssh://" + spec.replace(":", "/", 1)
    if "://" in spec:
        # pip needs git+ to clone; a URL of an archive or a wheel is left as it is.
        is_git = spec.split("#")[0].rsplit("@", 1)[0].endswith(".git")
        return "git+" + spec if is_git and not spec.startswith("git+") else spec
    if spec.startswith((".", "/")) or "/" in spec or Path(spec).is_dir():
        if PurePosixPath(spec).is_absolute():
            raise MicrobuildError(f"--install {spec}: an absolute path exists only on this "
                                  "machine; give a path inside the repository (./vendor/"
                                  "microbuild), a git URL or a requirement "
                                  f"({DISTRIBUTION}==X)")
        return spec if spec.startswith(".") else "./" + spec
    name = re.split(r"[\s\[<>=!~;@]", spec, maxsplit=1)[0]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise MicrobuildError(f"--install {spec}: not a requirement ({DISTRIBUTION}==X), a git "
                              "URL or a path")
    if re.sub(r"[-_.]+", "-", name).lower() == "microbuild":
        raise MicrobuildError(f"--install {spec}: 'microbuild' on PyPI is an unrelated project; "
                              f"this one is {DISTRIBUTION} (e.g. {DISTRIBUTION}=="
                              f"{microbuild.__version__})")
    return spec


def emulator_packages(board_name: str) -> tuple[str, ...] | None:
    """The Debian packages that run ``board_name`` with --emulate (none for the host), or None
    when the board is neither emulated nor the host (a real board: --emulate does not run it)."""
    board = load_board(board_name)
    if board.is_host:
        return ()
    if not board.is_emulated:
        return None
    if board.default_runner == "simavr" and not board.qemu:
        return ("simavr",)
    return (debian_package(qemu_program(board)),)


def matrix_entries(cells: list[Cell], models_root: str = ".",
                   checkout: str | os.PathLike | None = None,
                   emulate: bool = False) -> list[dict[str, str]]:
    """One entry per cell: the variables its job runs with (see the module's docstring)."""
    entries = []
    for cell, slug in zip(cells, job_slugs(cells)):
        if cell.executor not in EXECUTORS:
            raise MicrobuildError(f"cell {cell.cell_id}: executor '{cell.executor}' is not one "
                                  f"`microbuild ci` builds ({', '.join(EXECUTORS)})")
        packages = list(debian_packages(cell.toolchain))
        runs = emulator_packages(cell.board) if emulate else None
        if runs is not None:
            packages += [p for p in runs if p not in packages]
        entry = {"MB_SLUG": slug, "MB_BOARD": cell.board, "MB_TOOLCHAIN": cell.toolchain,
                 "MB_MODEL": cell.model, "MB_EXECUTOR": cell.executor,
                 "MB_MODEL_FILE": model_file(cell, models_root, checkout),
                 "MB_PACKAGES": " ".join(packages),
                 # names the cache of these packages' .deb files
                 "MB_APT_KEY": _key(" ".join(packages)),
                 "MB_EMULATE": "--emulate" if runs is not None else ""}
        for key, value in entry.items():
            if not _JSON_SAFE.match(value):
                raise MicrobuildError(f"cell {cell.cell_id}: {key} {value!r} holds a quote, a "
                                      "backslash or a control character, which a CI job cannot "
                                      "pass on safely; rename it")
        entries.append(entry)
    return entries


def _chunks(entries: list[dict[str, str]], size: int) -> list[tuple[str, list[dict[str, str]]]]:
    """(job name, entries) for each matrix job: cells, cells-2, ..."""
    return [(CELL_JOB if i == 0 else f"{CELL_JOB}-{i // size + 1}", entries[i:i + size])
            for i in range(0, len(entries), size)]


def apt_script(cache_dir: str, *, sudo: bool, extra: Sequence[str] = (),
               cell: bool = True) -> str:
    """Install ``extra`` and (``cell``) the cell's Debian packages, $MB_PACKAGES, keeping the .deb
    files in ``cache_dir`` (which the engine caches between runs) instead of /var/cache/apt."""
    s = "sudo " if sudo else ""
    lines = [
        "# The .deb files go to a folder the CI engine caches between runs.",
        f'mkdir -p "{cache_dir}/partial"',
        f"{s}apt-get update",
        f"{s}apt-get install -y --no-install-recommends "
        f'-o Dir::Cache::Archives="{cache_dir}" -o APT::Keep-Downloaded-Packages=true '
        + " ".join([*(shlex.quote(p) for p in extra), *(["$MB_PACKAGES"] if cell else [])]),
    ]
    if sudo:
        lines.append("# apt wrote them as root: the cache action runs as this user.")
        lines.append(f'sudo chown -R "$(id -u):$(id -g)" "{cache_dir}"')
    return "\n".join(lines) + "\n"


def pip_script() -> str:
    """Install microbuild from $MICROBUILD_INSTALL, and TFLM's interpreter for --emulate."""
    return ('python -m pip install "$MICROBUILD_INSTALL"\n'
            "# --emulate compares each run with TFLM's interpreter.\n"
            f'if [ -n "$MB_EMULATE" ]; then python -m pip install {EMULATE_PIP}; fi\n')


def cell_script(kernels: Sequence[str] = ()) -> str:
    """What a cell job runs: ``microbuild ci`` restricted to its one cell, building into
    out/$MB_SLUG/ (the firmware in out/$MB_SLUG/cells/<cell id>/) and writing the cell (a JSON
    list of one) to out/$MB_SLUG/cell.json; $MB_EMULATE (--emulate or nothing) also runs it.
    --no-cache: a fresh runner has nothing cached. ``kernels``: the kernel-choice options
    (--tuning FILE, --variant OPCODE=NAME) as given to `microbuild ci`, the same in every cell."""
    extra = "".join(" " + shlex.quote(k) for k in kernels)
    return ('mkdir -p "out/$MB_SLUG"\n'
            'microbuild ci --boards "$MB_BOARD" --toolchains "$MB_TOOLCHAIN" '
            '--models "$MB_MODEL_FILE" --out "out/$MB_SLUG" --no-cache '
            f'--json "out/$MB_SLUG/cell.json" $MB_EMULATE{extra}\n')


def fallback_script() -> str:
    """Write out/$MB_SLUG/cell.json as a failed cell when the job stopped before `microbuild ci`
    wrote it (apt or pip failed), so the merge job still shows the cell. The values were checked
    to need no JSON escaping (matrix_entries)."""
    record = ('[{"board":"%s","toolchain":"%s","model":"%s","executor":"%s","model_path":"%s",'
              '"status":"failed","message":"the CI job stopped before `microbuild ci` recorded '
              'this cell (see the log of the job)"}]')
    return ('if [ ! -f "out/$MB_SLUG/cell.json" ]; then\n'
            '  mkdir -p "out/$MB_SLUG"\n'
            f"  printf '{record}\\n' \"$MB_BOARD\" \"$MB_TOOLCHAIN\" \"$MB_MODEL\" "
            '"$MB_EXECUTOR" "$MB_MODEL_FILE" > "out/$MB_SLUG/cell.json"\n'
            "fi\n")


def cell_row_script(destination: str | None) -> str:
    """Append the cell's row of the size table (Markdown) to ``destination`` (None: the log). It
    never fails the job: the build step already said whether the cell failed, and microbuild
    may be missing."""
    to = f" >> {destination}" if destination else ""
    return ('microbuild ci --merge "out/$MB_SLUG/cell.json" --markdown "out/$MB_SLUG/cell.md" '
            "> /dev/null || true\n"
            f'if [ -f "out/$MB_SLUG/cell.md" ]; then cat "out/$MB_SLUG/cell.md"{to}; fi\n')


def artifact_paths(out: str) -> list[str]:
    """What a cell job uploads from its folder ``out`` (out/<cell id>): its cell.json, the SCons
    log and the cell's own build folder (ELF, .bin/.hex, size report, generated C); not the
    board's runtime library objects."""
    return [f"{out}/cell.json", f"{out}/ci.log", f"{out}/cells/"]


def merge_command(pattern: str, baseline: str | None, max_growth: str | None = None) -> str:
    """The merge job's microbuild command. ``pattern`` is quoted: `microbuild ci --merge` globs
    it itself (** included), whatever the shell."""
    words = ["microbuild", "ci", "--merge", pattern, "--markdown", TABLE_MD, "--json", TABLE_JSON]
    if baseline:
        words += ["--baseline", baseline]
        if max_growth:
            words += ["--max-growth", max_growth]
    return shlex.join(words)


def _key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (run: scripts) as literal blocks; long command lines kept whole; a
    mapping used twice written out twice (no &anchors, which people rarely read)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(document: dict[str, Any], header: str) -> str:
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=1 << 16, allow_unicode=True)
    return header + body


def _header(kind: str, cells: list[Cell], install: str) -> str:
    return (f"# {kind} written by `microbuild ci --emit`: a matrix of {len(cells)} cell(s) and a "
            f"merge job.\n# microbuild comes from: {install} (`ci --emit --install` changes it)."
            "\n# Regenerate it rather than editing it by hand.\n")


# --- GitHub Actions ------------------------------------------------------------------------------

GITHUB_APT_CACHE = "$HOME/.cache/microbuild-apt"
GITHUB_PIP_CACHE = "~/.cache/pip"


def _github_setup(python: str, pip_key: str) -> list[dict[str, Any]]:
    return [{"name": "Check out", "uses": CHECKOUT},
            {"name": "Set up Python", "uses": SETUP_PYTHON, "with": {"python-version": python}},
            {"name": "Cache pip's downloads", "uses": CACHE,
             "with": {"path": GITHUB_PIP_CACHE, "key": pip_key,
                      "restore-keys": pip_key.rsplit("-", 1)[0] + "-"}}]


def github_actions(cells: list[Cell], *, models_root: str = ".", baseline: str | None = None,
                   python: str = "3.11", checkout: str | os.PathLike | None = None,
                   max_growth: str | None = None, kernels: Sequence[str] = (),
                   install: str | None = None, emulate: bool = False) -> str:
    """A GitHub Actions workflow (.github/workflows/*.yml): the matrix job "cells" plus "merge".

    ``models_root`` and ``checkout``: see model_file. ``baseline``: a `microbuild ci --json` file
    in the repository that the merge job compares the sizes with (``max_growth``: its
    --max-growth). ``kernels``: see cell_script. ``install``: see install_source. ``emulate``:
    cells of emulated boards and the host also run (QEMU, simavr) and are compared with TFLM."""
    source = install_source(install)
    entries = matrix_entries(cells, models_root, checkout, emulate)
    pip_key = f"pip-${{{{ runner.os }}}}-py{python}-{_key(source)}"
    apt_key = "apt-${{ runner.os }}-${{ matrix.MB_APT_KEY }}"
    jobs: dict[str, Any] = {}
    for name, chunk in _chunks(entries, GITHUB_MATRIX_MAX):
        jobs[name] = {
            "name": "${{ matrix.MB_BOARD }} / ${{ matrix.MB_TOOLCHAIN }} / ${{ matrix.MB_MODEL }}"
                    " / ${{ matrix.MB_EXECUTOR }}",
            "runs-on": GITHUB_RUNNER,
            # Every cell runs to its end: one failed cell must not cancel the others.
            "strategy": {"fail-fast": False, "matrix": {"include": chunk}},
            # The scripts read the entry's variables from the environment: no expression is
            # ever pasted into a shell command.
            "env": {k: f"${{{{ matrix.{k} }}}}" for k in entries[0]},
            "steps": _github_setup(python, pip_key) + [
                {"name": "Cache the toolchain's Debian packages", "uses": CACHE,
                 "with": {"path": GITHUB_APT_CACHE.replace("$HOME", "~"), "key": apt_key}},
                {"name": "Install the toolchain", "run": apt_script(GITHUB_APT_CACHE, sudo=True)},
                {"name": "Install microbuild", "run": pip_script()},
                {"name": "Build the cell", "run": cell_script(kernels)},
                {"name": "Record the cell if it did not build", "if": "always()",
                 "run": fallback_script()},
                {"name": "Add the cell to the job summary", "if": "always()",
                 "run": cell_row_script('"$GITHUB_STEP_SUMMARY"')},
                {"name": "Upload the cell", "if": "always()", "uses": UPLOAD,
                 "with": {"name": "cell-${{ matrix.MB_SLUG }}",
                          "path": "\n".join(artifact_paths("out/${{ matrix.MB_SLUG }}")) + "\n",
                          "if-no-files-found": "error"}},
            ],
        }
    jobs[MERGE_JOB] = {
        "name": "size table",
        "needs": [name for name in jobs],
        # Also when cells failed (their cell.json says how), but not when the run was cancelled.
        "if": "${{ !cancelled() }}",
        "runs-on": GITHUB_RUNNER,
        "steps": _github_setup(python, pip_key) + [
            {"name": "Install microbuild", "run": 'python -m pip install "$MICROBUILD_INSTALL"\n'},
            # Each artifact lands in cells/<artifact name>/: cells/cell-<id>/cell.json.
            {"name": "Download the cells", "uses": DOWNLOAD,
             "with": {"pattern": "cell-*", "path": "cells"}},
            {"name": "Merge the cells into the size table",
             "run": merge_command("cells/**/cell.json", baseline, max_growth) + "\n"},
            {"name": "Add the table to the job summary", "if": "always()",
             "run": f'if [ -f {TABLE_MD} ]; then cat {TABLE_MD} >> "$GITHUB_STEP_SUMMARY"; fi\n'},
            {"name": "Upload the size table", "if": "always()", "uses": UPLOAD,
             "with": {"name": "size-table", "path": f"{TABLE_MD}\n{TABLE_JSON}\n",
                      "if-no-files-found": "warn"}},
        ],
    }
    workflow = {
        "name": WORKFLOW_NAME,
        "on": {"push": None, "pull_request": None, "workflow_dispatch": None},
        "permissions": {"contents": "read"},
        "env": {"MICROBUILD_INSTALL": source, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        "jobs": jobs,
    }
    return _dump(workflow, _header("GitHub Actions workflow", cells, source))


# --- GitLab CI -----------------------------------------------------------------------------------

GITLAB_APT_CACHE = "$CI_PROJECT_DIR/.cache/apt"


def _gitlab_python() -> list[str]:
    """A venv (Debian's Python is externally managed) with microbuild in it."""
    return ["python3 -m venv .venv", ". .venv/bin/activate"]


# after_script runs in a shell of its own: the venv made in before_script, if it was, again.
_GITLAB_REACTIVATE = "if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi"


def gitlab(cells: list[Cell], *, models_root: str = ".", baseline: str | None = None,
           image: str = GITLAB_IMAGE, checkout: str | os.PathLike | None = None,
           max_growth: str | None = None, kernels: Sequence[str] = (),
           install: str | None = None, emulate: bool = False) -> str:
    """A GitLab CI file (.gitlab-ci.yml): the parallel:matrix job "cells" in stage "cells", then
    "merge". Arguments as for github_actions. The jobs use the image's Debian Python (3.11 in
    debian:12); GitLab caches only folders inside the project, hence .cache/."""
    source = install_source(install)
    entries = matrix_entries(cells, models_root, checkout, emulate)
    pip_cache = {"key": f"pip-{_key(source)}", "paths": [".cache/pip"]}
    document: dict[str, Any] = {
        "stages": ["cells", "merge"],
        "default": {"image": image},
        "variables": {"DEBIAN_FRONTEND": "noninteractive", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                      "PIP_CACHE_DIR": "$CI_PROJECT_DIR/.cache/pip",
                      "MICROBUILD_INSTALL": source},
    }
    # GitLab's matrix builds the product of each entry's values: a single value each (a string,
    # not a list) is one cell.
    for name, chunk in _chunks(entries, GITLAB_MATRIX_MAX):
        document[name] = {
            "stage": "cells",
            "parallel": {"matrix": chunk},
            "cache": [{"key": "apt-$MB_APT_KEY", "paths": [".cache/apt"]},
                      pip_cache],
            "before_script": [apt_script(GITLAB_APT_CACHE, sudo=False,
                                         extra=["python3", "python3-venv"]),
                              *_gitlab_python(), pip_script()],
            "script": [cell_script(kernels)],
            # after_script runs even when before_script or script failed, before the upload.
            "after_script": [fallback_script(), _GITLAB_REACTIVATE, cell_row_script(None)],
            "artifacts": {"name": "cell-$MB_SLUG", "when": "always",
                          "paths": artifact_paths("out/$MB_SLUG")},
        }
    document[MERGE_JOB] = {
        "stage": "merge",
        # After every cell job, failed ones too (their cell.json says how); the artifacts of the
        # earlier stage come back to out/<cell id>/.
        "when": "always",
        "cache": [pip_cache],
        "before_script": [apt_script(GITLAB_APT_CACHE, sudo=False,
                                     extra=["python3", "python3-venv"], cell=False),
                          *_gitlab_python(), 'python -m pip install "$MICROBUILD_INSTALL"\n'],
        "script": [merge_command(f"{OUT_DIR}/**/cell.json", baseline, max_growth) + "\n"],
        # The table in the log also when the merge failed (a failed or grown cell).
        "after_script": [f"if [ -f {TABLE_MD} ]; then cat {TABLE_MD}; fi\n"],
        "artifacts": {"name": "size-table", "when": "always", "expose_as": "size table",
                      "paths": [TABLE_MD, TABLE_JSON]},
    }
    return _dump(document, _header("GitLab CI file", cells, source))
