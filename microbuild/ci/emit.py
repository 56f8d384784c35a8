"""Hand the CI matrix to a distributed CI engine: a GitHub Actions workflow or a GitLab CI file
with one job per cell and a final merge job that builds the size table.

Layout (the same for both engines):

* one explicit job per cell, ``cell-<cell id>``, whose commands are literal (no matrix
  expressions), so each cell has its own name, log, re-run button and artifact, and the commands
  in the file are exactly what runs;
* each cell job installs the Debian packages of the cell's toolchain family
  (microbuild.firmware.toolchains.DEBIAN_PACKAGES) and microbuild (``pip install -e .``), then runs
  ``microbuild ci`` restricted to its one cell, which writes ``out/<cell id>/cell.json`` (a JSON
  list of one cell) and exits 0 for ok, does-not-fit and not-applicable, 1 for a real failure;
* if the job stops before that file exists (apt or pip failed), a step that always runs writes a
  cell with status "failed", so the cell is in the table rather than silently missing;
* out/<cell id>/cell.json, its ci.log and cells/ (ELF, size report, generated C) are uploaded
  as the artifact cell-<cell id>, even when the job failed;
* the merge job waits for every cell job, runs even when some failed (not when cancelled),
  collects every cell.json and runs ``microbuild ci --merge``, which writes table.md/table.json
  and fails when a cell failed (or regressed against ``--baseline``).

The output is deterministic: the same cells (in the same order) give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shlex
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

import yaml

from microbuild.firmware.toolchains import debian_packages
from microbuild.ci.cells import Cell
from microbuild.ci.matrix import EXECUTORS
from microbuild.errors import MicrobuildError

WORKFLOW_NAME = "microbuild ci"
OUT_DIR = "out"  # each cell job builds into out/<cell id>/
MERGE_JOB = "merge"
TABLE_MD = "table.md"
TABLE_JSON = "table.json"
GITLAB_IMAGE = "debian:12"
GITHUB_RUNNER = "ubuntu-latest"

# Pinned major versions of the GitHub actions the workflow uses.
CHECKOUT = "actions/checkout@v4"
SETUP_PYTHON = "actions/setup-python@v5"
UPLOAD = "actions/upload-artifact@v4"
DOWNLOAD = "actions/download-artifact@v4"

_JOB_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


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


def apt_install(packages: Iterable[str], *, sudo: bool) -> str:
    """One shell command that installs ``packages`` from the distribution."""
    prefix = "sudo " if sudo else ""
    return (f"{prefix}apt-get update && {prefix}apt-get install -y --no-install-recommends "
            + " ".join(shlex.quote(p) for p in packages))


def cell_command(cell: Cell, slug: str, model: str, kernels: Sequence[str] = ()) -> str:
    """The microbuild command a cell job runs: ``microbuild ci`` restricted to this one cell,
    building into out/<slug>/ (the firmware in out/<slug>/cells/<cell id>/) and writing the cell
    (a JSON list of one) to out/<slug>/cell.json. It exits 0 for ok, does-not-fit and
    not-applicable and 1 for a failed build. --no-cache: a fresh runner has nothing cached.
    ``kernels``: the kernel-choice options (--tuning FILE, --variant OPCODE=NAME) as given to
    `microbuild ci`, repeated in every cell."""
    if cell.executor not in EXECUTORS:
        raise MicrobuildError(f"cell {cell.cell_id}: executor '{cell.executor}' is not one "
                              f"`microbuild ci` builds ({', '.join(EXECUTORS)})")
    out = f"{OUT_DIR}/{slug}"
    return shlex.join(["microbuild", "ci", "--boards", cell.board, "--toolchains", cell.toolchain,
                       "--models", model, "--out", out, "--no-cache", "--json", f"{out}/cell.json",
                       *kernels])


def fallback_command(cell: Cell, slug: str, model: str) -> str:
    """A shell command that writes out/<slug>/cell.json as a failed cell when the job stopped
    before `microbuild ci` wrote it (apt or pip failed), so the merge job still shows the cell."""
    out = f"{OUT_DIR}/{slug}"
    record = [{"board": cell.board, "toolchain": cell.toolchain, "model": cell.model,
               "executor": cell.executor, "model_path": model, "status": "failed",
               "message": "the CI job stopped before `microbuild ci` recorded this cell "
                          "(see the log of the job)"}]
    return (f"test -f {out}/cell.json || {{ mkdir -p {out} && printf '%s\\n' "
            f"{shlex.quote(json.dumps(record, separators=(',', ':')))} > {out}/cell.json; }}")


def artifact_paths(slug: str) -> list[str]:
    """What a cell job uploads: its cell.json, the SCons log and the cell's own build folder
    (ELF, .bin/.hex, size report, generated C); not the board's runtime library objects."""
    out = f"{OUT_DIR}/{slug}"
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


def _title(cell: Cell) -> str:
    return " / ".join(cell.key)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (run: scripts) as literal blocks; long command lines kept whole."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(document: dict[str, Any], header: str) -> str:
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=1 << 16, allow_unicode=True)
    return header + body


def _header(kind: str, cells: list[Cell]) -> str:
    return (f"# {kind} written by `microbuild ci --emit`: {len(cells)} cell job(s) and a merge "
            f"job.\n# Regenerate it rather than editing it by hand.\n")


# --- GitHub Actions ------------------------------------------------------------------------------

def _github_python(python: str) -> list[dict[str, Any]]:
    return [{"name": "Check out", "uses": CHECKOUT},
            {"name": "Set up Python", "uses": SETUP_PYTHON, "with": {"python-version": python}}]


_GITHUB_INSTALL_MICROBUILD = {"name": "Install microbuild", "run": "python -m pip install -e .\n"}


def github_actions(cells: list[Cell], *, models_root: str = ".", baseline: str | None = None,
                   python: str = "3.11", checkout: str | os.PathLike | None = None,
                   max_growth: str | None = None, kernels: Sequence[str] = ()) -> str:
    """A GitHub Actions workflow (.github/workflows/*.yml): one job per cell plus "merge".

    ``models_root`` and ``checkout``: see model_file. ``baseline``: a `microbuild ci --json` file
    in the repository that the merge job compares the sizes with (``max_growth``: its
    --max-growth). ``kernels``: see cell_command."""
    slugs = job_slugs(cells)
    jobs: dict[str, Any] = {}
    for cell, slug in zip(cells, slugs):
        out = f"{OUT_DIR}/{slug}"
        model = model_file(cell, models_root, checkout)
        jobs[f"cell-{slug}"] = {
            "name": _title(cell),
            "runs-on": GITHUB_RUNNER,
            "steps": _github_python(python) + [
                {"name": f"Install {cell.toolchain}",
                 "run": apt_install(debian_packages(cell.toolchain), sudo=True) + "\n"},
                dict(_GITHUB_INSTALL_MICROBUILD),
                {"name": "Build the cell",
                 "run": f"mkdir -p {out}\n{cell_command(cell, slug, model, kernels)}\n"},
                {"name": "Record the cell if it did not build", "if": "always()",
                 "run": fallback_command(cell, slug, model) + "\n"},
                {"name": "Upload the cell", "if": "always()", "uses": UPLOAD,
                 "with": {"name": f"cell-{slug}", "path": "\n".join(artifact_paths(slug)) + "\n",
                          "if-no-files-found": "error"}},
            ],
        }
    jobs[MERGE_JOB] = {
        "name": "size table",
        "needs": [f"cell-{slug}" for slug in slugs],
        # Also when cells failed (their cell.json says how), but not when the run was cancelled.
        "if": "${{ !cancelled() }}",
        "runs-on": GITHUB_RUNNER,
        "steps": _github_python(python) + [dict(_GITHUB_INSTALL_MICROBUILD),
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
        "jobs": jobs,
    }
    return _dump(workflow, _header("GitHub Actions workflow", cells))


# --- GitLab CI -----------------------------------------------------------------------------------

def _gitlab_setup(packages: Iterable[str]) -> list[str]:
    """Install Python, ``packages`` and microbuild (in a venv: Debian's Python is externally
    managed) on a bare Debian image."""
    return [
        apt_install(["python3", "python3-venv", *packages], sudo=False),
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        "python -m pip install -e .",
    ]


def gitlab(cells: list[Cell], *, models_root: str = ".", baseline: str | None = None,
           image: str = GITLAB_IMAGE, checkout: str | os.PathLike | None = None,
           max_growth: str | None = None, kernels: Sequence[str] = ()) -> str:
    """A GitLab CI file (.gitlab-ci.yml): a job per cell in stage "cells", then "merge".

    ``models_root``, ``checkout``, ``baseline``, ``max_growth``: as for github_actions. The
    jobs use the image's Debian Python (3.11 in debian:12)."""
    slugs = job_slugs(cells)
    document: dict[str, Any] = {
        "stages": ["cells", "merge"],
        "default": {"image": image},
        "variables": {"DEBIAN_FRONTEND": "noninteractive", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    }
    for cell, slug in zip(cells, slugs):
        out = f"{OUT_DIR}/{slug}"
        model = model_file(cell, models_root, checkout)
        document[f"cell-{slug}"] = {
            "stage": "cells",
            "before_script": _gitlab_setup(debian_packages(cell.toolchain)),
            "script": [f"mkdir -p {out}", cell_command(cell, slug, model, kernels)],
            # after_script runs even when before_script or script failed, before the upload.
            "after_script": [fallback_command(cell, slug, model)],
            "artifacts": {"name": f"cell-{slug}", "when": "always",
                          "paths": artifact_paths(slug)},
        }
    document[MERGE_JOB] = {
        "stage": "merge",
        # After every cell job, failed ones too (their cell.json says how). "dependencies" brings
        # their artifacts back to out/<cell id>/; unlike "needs" it has no 50-job limit.
        "when": "always",
        "dependencies": [f"cell-{slug}" for slug in slugs],
        "before_script": _gitlab_setup([]),
        "script": [merge_command(f"{OUT_DIR}/**/cell.json", baseline, max_growth)],
        "artifacts": {"name": "size-table", "when": "always", "paths": [TABLE_MD, TABLE_JSON]},
    }
    return _dump(document, _header("GitLab CI file", cells))
