"""`microbuild ci --emit`: the GitHub Actions and GitLab CI files microbuild.ci.emit writes.

They are checked against SchemaStore's schemas for both engines (vendored by check-jsonschema, so
offline), for stable bytes, job ids and packages, and by running each job's own commands here:
every cell job's steps (but apt-get and pip) in a folder of its own, its upload and the engine's
download imitated by copying, then the merge job's steps on what it downloaded."""

from __future__ import annotations

import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from microbuild import api
from microbuild.firmware.toolchains import DEBIAN_PACKAGES
from microbuild.ci import emit
from microbuild.ci.cells import Cell
from microbuild.errors import MicrobuildError

REPO = Path(__file__).resolve().parents[2]
TINY = "tests/models/tiny_fc.tflite"  # relative to the checkout, as the jobs name it
BIN = Path(sys.executable).parent  # where this venv's `microbuild` is
GITHUB_JOB_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc is not installed")


def _has_ci_command() -> bool:
    run = subprocess.run([str(BIN / "microbuild"), "ci", "--help"], capture_output=True, text=True)
    return run.returncode == 0 and "--merge" in run.stdout


needs_ci = pytest.mark.skipif(not _has_ci_command(), reason="`microbuild ci` is not there yet")


def schema(name: str) -> dict:
    pytest.importorskip("check_jsonschema", reason="pip install check-jsonschema (test extra)")
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads(vendor.joinpath(f"{name}.json").read_text(encoding="utf-8"))


def every_family_cells() -> list[Cell]:
    """A cell per toolchain family, plus names that need cleaning and ids that collide."""
    cells = [Cell("board", family, "tiny_fc", model_path=TINY) for family in DEBIAN_PACKAGES]
    cells += [Cell("my.board", "clang", "net.v2", model_path="models/net.v2.tflite"),
              # a.b and a_b: the same id once '.' (not allowed in a GitHub job id) is replaced.
              Cell("a.b", "host-gcc", "c", model_path="c.tflite"),
              Cell("a_b", "host-gcc", "c", model_path="c.tflite")]
    return cells


def planned_cells() -> list[Cell]:
    """What `microbuild ci --emit` hands over: every board, its toolchains, two models."""
    return api.plan_ci("all", [REPO / TINY, REPO / "tests/models/ds_cnn.tflite"])


def github_jobs(text: str) -> dict:
    return yaml.safe_load(text)["jobs"]


def gitlab_jobs(text: str) -> dict:
    document = yaml.safe_load(text)
    return {k: v for k, v in document.items() if isinstance(v, dict) and "script" in v}


# --- the files are what the engines accept ------------------------------------------------------

@pytest.mark.parametrize("cells", [every_family_cells, planned_cells], ids=["families", "planned"])
@pytest.mark.parametrize("baseline", [None, "ci/baseline.json"])
def test_github_workflow_matches_the_schema(cells, baseline):
    text = emit.github_actions(cells(), baseline=baseline, checkout=REPO)
    jsonschema.validate(yaml.safe_load(text), schema("github-workflows"),
                        cls=jsonschema.Draft7Validator)


@pytest.mark.parametrize("cells", [every_family_cells, planned_cells], ids=["families", "planned"])
@pytest.mark.parametrize("baseline", [None, "ci/baseline.json"])
def test_gitlab_file_matches_the_schema(cells, baseline):
    text = emit.gitlab(cells(), baseline=baseline, checkout=REPO)
    jsonschema.validate(yaml.safe_load(text), schema("gitlab-ci"), cls=jsonschema.Draft7Validator)


def test_the_schemas_do_catch_mistakes():
    """The validation above is not vacuous: a job without runs-on, a job without script fail."""
    github = yaml.safe_load(emit.github_actions(every_family_cells()))
    del next(iter(github["jobs"].values()))["runs-on"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(github, schema("github-workflows"), cls=jsonschema.Draft7Validator)
    gitlab = yaml.safe_load(emit.gitlab(every_family_cells()))
    gitlab["merge"]["script"] = 42
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(gitlab, schema("gitlab-ci"), cls=jsonschema.Draft7Validator)


@pytest.mark.parametrize("write", [emit.github_actions, emit.gitlab], ids=["github", "gitlab"])
def test_same_cells_give_the_same_bytes(write):
    first = write(planned_cells(), baseline="ci/baseline.json", checkout=REPO)
    second = write(planned_cells(), baseline="ci/baseline.json", checkout=REPO)
    assert first == second
    assert first.encode() == second.encode()


# --- jobs: ids, packages, the merge job ---------------------------------------------------------

def test_github_job_ids_are_valid_and_unique():
    cells = every_family_cells()
    jobs = github_jobs(emit.github_actions(cells))
    assert len(jobs) == len(cells) + 1
    for job_id in jobs:
        assert GITHUB_JOB_ID.match(job_id), job_id
    cell_jobs = [j for j in jobs if j != "merge"]
    assert cell_jobs[0] == f"cell-{cells[0].cell_id}"
    assert "cell-my_board-clang-net_v2-aot" in cell_jobs
    # a.b and a_b clash as job ids: each still gets its own job, artifact and folder.
    clashing = [j for j in cell_jobs if j.startswith("cell-a_b-host-gcc-c-aot")]
    assert len(clashing) == 2 and len(set(clashing)) == 2
    assert clashing == [f"cell-a_b-host-gcc-c-aot-{emit._digest(c)}" for c in cells[-2:]]
    uploads = [step["with"]["name"] for j in cell_jobs for step in jobs[j]["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads == cell_jobs
    assert jobs["cell-board-host-gcc-tiny_fc-aot"]["name"] == "board / host-gcc / tiny_fc / aot"


def test_repeated_or_no_cells_are_refused():
    with pytest.raises(MicrobuildError, match="repeated"):
        emit.github_actions([Cell("host", "host-gcc", "m"), Cell("host", "host-gcc", "m")])
    with pytest.raises(MicrobuildError, match="no cells"):
        emit.gitlab([])


@pytest.mark.parametrize("family", sorted(DEBIAN_PACKAGES))
def test_each_job_installs_its_toolchain_packages(family):
    expected = {"gcc-arm-none-eabi": {"gcc-arm-none-eabi", "libnewlib-arm-none-eabi",
                                      "picolibc-arm-none-eabi"},
                "clang": {"clang", "lld", "gcc-arm-none-eabi", "picolibc-arm-none-eabi"},
                "gcc-riscv-elf": {"gcc-riscv64-unknown-elf", "picolibc-riscv64-unknown-elf"},
                "host-gcc": {"gcc", "libc6-dev"}, "host-clang": {"clang", "libc6-dev"},
                "avr-gcc": {"gcc-avr", "avr-libc"}}[family]
    cells = [Cell("board", family, "tiny_fc", model_path=TINY)]

    (steps,) = [job["steps"] for name, job in github_jobs(emit.github_actions(cells)).items()
                if name != "merge"]
    (apt,) = [s["run"] for s in steps if "apt-get" in s.get("run", "")]
    assert apt.startswith("sudo apt-get update && sudo apt-get install -y ")
    assert set(apt.split("--no-install-recommends")[1].split()) == expected
    assert [s["run"] for s in steps if "pip" in s.get("run", "")] == ["python -m pip install -e .\n"]

    (job,) = [job for name, job in gitlab_jobs(emit.gitlab(cells)).items() if name != "merge"]
    (apt,) = [line for line in job["before_script"] if "apt-get" in line]
    assert set(apt.split("--no-install-recommends")[1].split()) == \
        expected | {"python3", "python3-venv"}
    assert "python -m pip install -e ." in job["before_script"]
    assert yaml.safe_load(emit.gitlab(cells))["default"]["image"] == "debian:12"


def test_an_unknown_family_is_refused():
    with pytest.raises(MicrobuildError, match="toolchain 'sdcc' is unknown"):
        emit.github_actions([Cell("board", "sdcc", "m")])


def test_merge_jobs_wait_for_every_cell_and_run_after_failures():
    cells = every_family_cells()
    jobs = github_jobs(emit.github_actions(cells, baseline="ci/base line.json", max_growth="2%"))
    merge = jobs["merge"]
    assert merge["needs"] == [j for j in jobs if j != "merge"]
    assert merge["if"] == "${{ !cancelled() }}"
    runs = [s["run"] for s in merge["steps"] if "run" in s]
    assert "microbuild ci --merge 'cells/**/cell.json' --markdown table.md --json table.json " \
           "--baseline 'ci/base line.json' --max-growth 2%\n" in runs
    assert any("$GITHUB_STEP_SUMMARY" in r for r in runs)
    for name, job in jobs.items():
        uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload")]
        assert uploads and all(s["if"] == "always()" for s in uploads), name

    gitlab = gitlab_jobs(emit.gitlab(cells))
    merge = gitlab.pop("merge")
    assert merge["when"] == "always" and merge["dependencies"] == list(gitlab)
    assert merge["script"] == ["microbuild ci --merge 'out/**/cell.json' --markdown table.md "
                               "--json table.json"]
    assert all(job["artifacts"]["when"] == "always" for job in gitlab.values())


def test_model_paths_are_relative_to_the_checkout(tmp_path):
    inside = Cell("host", "host-gcc", "tiny_fc", model_path=str(REPO / TINY))
    assert emit.model_file(inside, checkout=REPO) == TINY
    assert emit.model_file(inside, "/srv/repo", checkout=REPO) == f"/srv/repo/{TINY}"
    assert emit.model_file(Cell("host", "host-gcc", "net", model_path="m/net.tflite")) == \
        "m/net.tflite"
    assert emit.model_file(Cell("host", "host-gcc", "net"), "models") == "models/net.tflite"
    outside = Cell("host", "host-gcc", "x", model_path=str(tmp_path / "x.tflite"))
    with pytest.raises(MicrobuildError, match="outside the checkout"):
        emit.model_file(outside, checkout=REPO)


# --- the jobs' commands, run here ---------------------------------------------------------------

def bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    for var in ("MICROBUILD_BOARDS_PATH", "MICROBUILD_VERBOSE", "MICROBUILD_ERROR_LOG"):
        environment.pop(var, None)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=600)


def is_install(command: str) -> bool:
    return "apt-get" in command or "pip install" in command or "venv" in command


def small_matrix(workspace_template: Path) -> list[Cell]:
    """host and mps2-an385 build tiny_fc; tiny-ram (a board of the repository's boards/, 8 KiB
    of RAM) does not fit it, which must not fail its job."""
    boards = workspace_template / "boards"
    boards.mkdir(parents=True)
    (boards / "tiny-ram.yaml").write_text(textwrap.dedent("""\
        name: tiny-ram
        extends: mps2-an385
        memory:
          regions:
            sram: {length: 8K}
        """))
    return [Cell("host", "host-gcc", "tiny_fc", model_path=TINY),
            Cell("mps2-an385", "gcc-arm-none-eabi", "tiny_fc", model_path=TINY),
            Cell("tiny-ram", "gcc-arm-none-eabi", "tiny_fc", model_path=TINY)]


def new_workspace(template: Path, path: Path) -> Path:
    """A fresh checkout of "the repository" for one job: only boards/ (the models are reached
    through models_root, microbuild through the venv)."""
    shutil.copytree(template, path)
    return path


def copy_artifact(workspace: Path, paths: list[str], destination: Path, root: str) -> None:
    """An upload and a download: ``paths`` (files or folders/) as stored relative to ``root``."""
    for p in paths:
        source = workspace / p
        if not source.exists():
            continue
        target = destination / Path(p.rstrip("/")).relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)


EXPECTED = {"host": "ok", "mps2-an385": "ok", "tiny-ram": "does-not-fit"}


@needs_ci
@needs_arm
def test_github_jobs_run_here(tmp_path):
    template = tmp_path / "repo"
    cells = small_matrix(template)
    jobs = github_jobs(emit.github_actions(cells, models_root=str(REPO)))
    downloads = tmp_path / "merge" / "cells"
    for (job_id, job), cell in zip(list(jobs.items())[:-1], cells):
        workspace = new_workspace(template, tmp_path / job_id)
        failed = False
        for step in job["steps"]:
            if "run" in step and is_install(step["run"]):
                continue
            if failed and step.get("if") != "always()":
                continue
            if "run" in step:
                run = bash(step["run"], workspace)
                assert run.returncode == 0, f"{job_id}: {step['name']}\n{run.stdout}\n{run.stderr}"
            elif step["uses"].startswith("actions/upload-artifact"):
                # download-artifact@v4 puts each artifact in cells/<name>/, the paths relative
                # to the folder they have in common (out/<id>/).
                paths = step["with"]["path"].split()
                root = os.path.commonpath([p.rstrip("/") for p in paths])
                copy_artifact(workspace, paths, downloads / step["with"]["name"], root)
        (written,) = json.loads((workspace / "out" / job_id.removeprefix("cell-")
                                 / "cell.json").read_text())
        assert (written["board"], written["status"]) == (cell.board, EXPECTED[cell.board])
        if written["status"] == "ok":
            assert (downloads / job_id / written["elf"]).is_file()
        assert (downloads / job_id / "cell.json").is_file()

    merge_dir = downloads.parent
    shutil.copytree(template / "boards", merge_dir / "boards")
    summary = tmp_path / "summary.md"
    for step in jobs["merge"]["steps"]:
        if "run" in step and not is_install(step["run"]):
            run = bash(step["run"], merge_dir, GITHUB_STEP_SUMMARY=str(summary))
            assert run.returncode == 0, f"merge: {step['name']}\n{run.stdout}\n{run.stderr}"
    table = json.loads((merge_dir / "table.json").read_text())
    assert {(c["board"], c["status"]) for c in table} == set(EXPECTED.items())
    markdown = (merge_dir / "table.md").read_text()
    assert "does-not-fit" in markdown and "| mps2-an385 |" in markdown
    assert summary.read_text() == markdown


@needs_ci
@needs_arm
def test_gitlab_jobs_run_here(tmp_path):
    template = tmp_path / "repo"
    cells = small_matrix(template)
    jobs = gitlab_jobs(emit.gitlab(cells, models_root=str(REPO)))
    merge_dir = new_workspace(template, tmp_path / "merge")
    for (name, job), cell in zip(list(jobs.items())[:-1], cells):
        assert all(is_install(line) or line.startswith(". ") for line in job["before_script"])
        workspace = new_workspace(template, tmp_path / name)
        run = bash("\n".join(job["script"]), workspace)
        assert run.returncode == 0, f"{name}\n{run.stdout}\n{run.stderr}"
        run = bash("\n".join(job["after_script"]), workspace)
        assert run.returncode == 0, f"{name}: after_script\n{run.stderr}"
        # GitLab restores artifacts at the paths they were uploaded from.
        copy_artifact(workspace, job["artifacts"]["paths"], merge_dir, ".")
        (written,) = json.loads((merge_dir / "out" / name.removeprefix("cell-")
                                 / "cell.json").read_text())
        assert (written["board"], written["status"]) == (cell.board, EXPECTED[cell.board])

    run = bash("\n".join(jobs["merge"]["script"]), merge_dir)
    assert run.returncode == 0, run.stderr
    for path in jobs["merge"]["artifacts"]["paths"]:
        assert (merge_dir / path).is_file()
    table = json.loads((merge_dir / "table.json").read_text())
    assert {(c["board"], c["status"]) for c in table} == set(EXPECTED.items())


@needs_ci
def test_a_job_that_stopped_early_shows_as_a_failed_cell(tmp_path):
    """apt or pip failed: the always-run step records the cell as failed, and the merge fails
    with that cell in the table instead of leaving it out."""
    cells = [Cell("mps2-an385", "gcc-riscv-elf", "tiny_fc", model_path=TINY),
             Cell("host", "host-gcc", "tiny_fc", model_path=TINY)]
    jobs = github_jobs(emit.github_actions(cells, models_root=str(REPO)))
    downloads = tmp_path / "cells"
    job_id = next(iter(jobs))
    (fallback,) = [s["run"] for s in jobs[job_id]["steps"] if s.get("name", "").startswith("Record")]
    assert bash(fallback, tmp_path).returncode == 0
    assert bash(fallback, tmp_path).returncode == 0  # a no-op once the file is there
    (record,) = json.loads((tmp_path / "out" / job_id.removeprefix("cell-") / "cell.json")
                           .read_text())
    cell = Cell.from_dict(record)
    assert (cell.key, cell.status, cell.model_path) == \
        (cells[0].key, "failed", str(REPO / TINY))
    assert "stopped before `microbuild ci`" in cell.message
    shutil.copytree(tmp_path / "out", downloads)

    (merge,) = [s["run"] for s in jobs["merge"]["steps"] if "--merge" in s.get("run", "")]
    run = bash(merge, tmp_path)
    assert run.returncode == 1, run.stderr
    table = json.loads((tmp_path / "table.json").read_text())
    assert [(c["board"], c["status"]) for c in table] == [("mps2-an385", "failed")]
    assert "stopped before" in (tmp_path / "table.md").read_text()


@needs_ci
@needs_arm
def test_kernel_choices_reach_every_cell_job(tmp_path, monkeypatch):
    """`ci --emit --tuning LOG --variant OP=NAME`: each cell job builds with the same choice, and
    the command runs here; a log that cannot be read is refused when emitting."""
    from microbuild.compiler.variants import op_signature
    from microbuild.model.reader import read_model
    from microbuild.tuning import TuningLog

    graph = read_model(REPO / TINY)
    fc = next(op for op in graph.operators if op.opcode == "FULLY_CONNECTED")
    log = TuningLog()
    log.record("cortex-m7", op_signature(fc, graph),
               {"best": "rows4", "candidates": {"reference": {"ticks": 2, "correct": True},
                                                "rows4": {"ticks": 1, "correct": True}}})
    workspace = tmp_path / "repo"
    (workspace / "models").mkdir(parents=True)
    shutil.copy(REPO / TINY, workspace / "models" / "tiny_fc.tflite")
    log.save(workspace / "tune.json")
    monkeypatch.chdir(workspace)
    cells = api.plan_ci("mps2-an500", [workspace / "models" / "tiny_fc.tflite"], ["gcc-arm-none-eabi"])
    path = api.emit_ci_workflow(cells, "github-actions", workspace / "ci.yml", tuning="tune.json",
                                variants={"ADD": "reference"})
    jobs = github_jobs(path.read_text())
    commands = [step["run"] for job_id, job in jobs.items() if job_id != "merge"
                for step in job["steps"] if "run" in step and "microbuild ci --boards" in step["run"]]
    assert len(commands) == len(cells)
    for command in commands:
        assert "--tuning tune.json --variant ADD=reference" in command, command
    run = bash(commands[0], workspace)
    assert run.returncode == 0, run.stdout + run.stderr
    (cell,) = json.loads(next((workspace / "out").glob("*/cell.json")).read_text())
    assert cell["status"] == "ok", cell

    with pytest.raises(MicrobuildError, match="missing.json"):
        api.emit_ci_workflow(cells, "gitlab", workspace / "g.yml", tuning="missing.json")
