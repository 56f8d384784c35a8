"""`microbuild ci --emit`: the GitHub Actions and GitLab CI files microbuild.ci.emit writes.

They are checked against the engines' JSON schemas (vendored in tests/ci/schemas/, see its
README for where they come from), for stable bytes, one matrix entry per cell, packages, caches
and install sources, and by running each job's own commands here: for each cell, every `run:`
step (GitHub) or before_script/script/after_script line (GitLab) with the cell's matrix
variables, in a folder of its own, microbuild installed by the job's own pip command from a wheel
of this checkout, the engine's upload and download imitated by copying; then the merge job's
commands on what it downloaded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from microbuild import api
from microbuild.ci import emit
from microbuild.ci.cells import Cell
from microbuild.errors import MicrobuildError
from microbuild.firmware.toolchains import DEBIAN_PACKAGES

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).resolve().parent / "schemas"
TINY = "tests/models/tiny_fc.tflite"  # relative to the checkout, as the jobs name it
GITHUB_JOB_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
MATRIX_EXPRESSION = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")

needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc is not installed")


def validate(document: dict, name: str) -> None:
    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema, cls=jsonschema.Draft7Validator)


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


def github_entries(document: dict, job: str = "cells") -> list[dict]:
    return document["jobs"][job]["strategy"]["matrix"]["include"]


def gitlab_entries(document: dict, job: str = "cells") -> list[dict]:
    """GitLab's matrix entries: one value (a string, so no product) per variable."""
    entries = document[job]["parallel"]["matrix"]
    assert all(isinstance(v, str) for entry in entries for v in entry.values()), entries
    return entries


# --- the files are what the engines accept ------------------------------------------------------

@pytest.mark.parametrize("cells", [every_family_cells, planned_cells], ids=["families", "planned"])
@pytest.mark.parametrize("options", [{}, {"baseline": "ci/baseline.json", "max_growth": "2%"},
                                     {"emulate": True, "install": "git+https://example.org/mb.git"}],
                         ids=["plain", "baseline", "emulate"])
def test_workflows_match_their_schemas(cells, options):
    listed = cells()
    if options.get("emulate") and cells is every_family_cells:
        listed = planned_cells()[:6]  # --emulate looks the boards up: real ones only
    validate(yaml.safe_load(emit.github_actions(listed, checkout=REPO, **options)),
             "github-workflow")
    validate(yaml.safe_load(emit.gitlab(listed, checkout=REPO, **options)), "gitlab-ci")


def test_the_schemas_do_catch_mistakes():
    """The validation above is not vacuous: a job without runs-on, a matrix that is not a list,
    a script that is a number all fail."""
    github = yaml.safe_load(emit.github_actions(every_family_cells()))
    del github["jobs"]["cells"]["runs-on"]
    with pytest.raises(jsonschema.ValidationError):
        validate(github, "github-workflow")
    gitlab = yaml.safe_load(emit.gitlab(every_family_cells()))
    gitlab["cells"]["parallel"]["matrix"] = {"MB_BOARD": "host"}
    with pytest.raises(jsonschema.ValidationError):
        validate(gitlab, "gitlab-ci")
    gitlab = yaml.safe_load(emit.gitlab(every_family_cells()))
    gitlab["merge"]["script"] = 42
    with pytest.raises(jsonschema.ValidationError):
        validate(gitlab, "gitlab-ci")


@pytest.mark.parametrize("write", [emit.github_actions, emit.gitlab], ids=["github", "gitlab"])
def test_same_cells_give_the_same_bytes(write):
    first = write(planned_cells(), baseline="ci/baseline.json", checkout=REPO)
    second = write(planned_cells(), baseline="ci/baseline.json", checkout=REPO)
    assert first.encode() == second.encode()
    assert "&id" not in first and "*id" not in first  # no YAML anchors/aliases


# --- one matrix entry per cell ------------------------------------------------------------------

def test_one_matrix_entry_per_cell_and_two_jobs():
    cells = planned_cells()
    github = yaml.safe_load(emit.github_actions(cells, checkout=REPO))
    assert list(github["jobs"]) == ["cells", "merge"]
    gitlab = yaml.safe_load(emit.gitlab(cells, checkout=REPO))
    jobs = [k for k, v in gitlab.items() if isinstance(v, dict) and "script" in v]
    # GitLab's schema caps a matrix at 50 entries: the cells are split over cells, cells-2, ...
    assert jobs == ["cells"] + [f"cells-{i}" for i in range(2, len(jobs))] + ["merge"]
    assert len(jobs) - 1 == -(-len(cells) // emit.GITLAB_MATRIX_MAX)
    every_gitlab_entry = [e for job in jobs[:-1] for e in gitlab_entries(gitlab, job)]
    for entries in (github_entries(github), every_gitlab_entry):
        assert [(e["MB_BOARD"], e["MB_TOOLCHAIN"], e["MB_MODEL"], e["MB_EXECUTOR"])
                for e in entries] == [c.key for c in cells]
        assert len({e["MB_SLUG"] for e in entries}) == len(cells)
    # An entry is variables only: the steps are written once (the old one-job-per-cell file
    # repeated ~38 lines per cell).
    longer = emit.github_actions(cells + [Cell("x", "host-gcc", "extra", model_path=TINY)],
                                 checkout=REPO)
    growth = len(longer.splitlines()) - len(emit.github_actions(cells, checkout=REPO).splitlines())
    assert growth == len(github_entries(github)[0])


def test_the_scripts_use_variables_not_expressions():
    """Values reach the shell through the environment, never pasted by the engine into a
    command (a model path with `$(...)` in it stays a string)."""
    github = yaml.safe_load(emit.github_actions(every_family_cells()))
    cells_job = github["jobs"]["cells"]
    assert cells_job["env"] == {k: f"${{{{ matrix.{k} }}}}" for k in github_entries(github)[0]}
    for step in cells_job["steps"] + github["jobs"]["merge"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def test_slugs_are_valid_and_unique():
    cells = every_family_cells()
    entries = github_entries(yaml.safe_load(emit.github_actions(cells)))
    slugs = [e["MB_SLUG"] for e in entries]
    for slug in slugs:
        assert GITHUB_JOB_ID.match(slug), slug
    assert slugs[0] == cells[0].cell_id
    assert "my_board-clang-net_v2-aot" in slugs
    clashing = [s for s in slugs if s.startswith("a_b-host-gcc-c-aot")]
    assert clashing == [f"a_b-host-gcc-c-aot-{emit._digest(c)}" for c in cells[-2:]]


def test_long_matrices_are_split_at_the_engines_limits():
    cells = [Cell("host", "host-gcc", f"m{i}", model_path=f"m{i}.tflite") for i in range(450)]
    github = yaml.safe_load(emit.github_actions(cells))
    assert [len(github_entries(github, j)) for j in ("cells", "cells-2")] == [256, 194]
    assert github["jobs"]["merge"]["needs"] == ["cells", "cells-2"]
    validate(github, "github-workflow")
    gitlab = yaml.safe_load(emit.gitlab(cells))
    jobs = ["cells"] + [f"cells-{i}" for i in range(2, 11)]
    assert [len(gitlab_entries(gitlab, j)) for j in jobs[:9]] == [50] * 9
    assert "cells-10" not in gitlab
    validate(gitlab, "gitlab-ci")


def test_repeated_unknown_or_unsafe_cells_are_refused():
    with pytest.raises(MicrobuildError, match="repeated"):
        emit.github_actions([Cell("host", "host-gcc", "m"), Cell("host", "host-gcc", "m")])
    with pytest.raises(MicrobuildError, match="no cells"):
        emit.gitlab([])
    with pytest.raises(MicrobuildError, match="toolchain 'sdcc' is unknown"):
        emit.github_actions([Cell("board", "sdcc", "m")])
    with pytest.raises(MicrobuildError, match='MB_MODEL_FILE .*quote'):
        emit.gitlab([Cell("host", "host-gcc", "m", model_path='we"ird.tflite')])


# --- what each cell installs --------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(DEBIAN_PACKAGES))
def test_each_entry_names_its_toolchain_packages(family):
    expected = {"gcc-arm-none-eabi": {"gcc-arm-none-eabi", "libnewlib-arm-none-eabi",
                                      "picolibc-arm-none-eabi"},
                "clang": {"clang", "lld", "gcc-arm-none-eabi", "picolibc-arm-none-eabi"},
                "gcc-riscv-elf": {"gcc-riscv64-unknown-elf", "picolibc-riscv64-unknown-elf"},
                "host-gcc": {"gcc", "libc6-dev"}, "host-clang": {"clang", "libc6-dev"},
                "avr-gcc": {"gcc-avr", "avr-libc"}}[family]
    cells = [Cell("board", family, "tiny_fc", model_path=TINY)]
    (entry,) = github_entries(yaml.safe_load(emit.github_actions(cells)))
    assert set(entry["MB_PACKAGES"].split()) == expected
    assert entry["MB_EMULATE"] == ""
    (entry,) = gitlab_entries(yaml.safe_load(emit.gitlab(cells)))
    assert set(entry["MB_PACKAGES"].split()) == expected
    assert yaml.safe_load(emit.gitlab(cells))["default"]["image"] == "debian:12"


def test_emulated_cells_also_install_their_emulator_and_run():
    cells = [Cell("mps2-an385", "gcc-arm-none-eabi", "tiny_fc", model_path=TINY),
             Cell("riscv32-virt", "gcc-riscv-elf", "tiny_fc", model_path=TINY),
             Cell("host", "host-gcc", "tiny_fc", model_path=TINY),
             Cell("stm32f746", "gcc-arm-none-eabi", "tiny_fc", model_path=TINY)]
    entries = github_entries(yaml.safe_load(emit.github_actions(cells, emulate=True)))
    packages = [set(e["MB_PACKAGES"].split()) for e in entries]
    assert "qemu-system-arm" in packages[0] and "qemu-system-misc" in packages[1]
    assert packages[2] == {"gcc", "libc6-dev"}
    assert not any(p.startswith("qemu") for p in packages[3])  # a real board: built only
    assert [e["MB_EMULATE"] for e in entries] == ["--emulate"] * 3 + [""]
    # Different package lists, different apt caches.
    assert len({e["MB_APT_KEY"] for e in entries}) == len({e["MB_PACKAGES"] for e in entries})
    assert not any(e["MB_EMULATE"] for e in
                   github_entries(yaml.safe_load(emit.github_actions(cells))))


@pytest.mark.parametrize("given, expected", [
    (None, "microbuild-mcu==0.1.0"),
    ("microbuild-mcu==0.2.0", "microbuild-mcu==0.2.0"),
    ("microbuild-mcu[platformio]>=0.1", "microbuild-mcu[platformio]>=0.1"),
    ("https://github.com/me/microbuild.git@v0.2.0", "git+https://github.com/me/microbuild.git@v0.2.0"),
    ("git+https://gitlab.com/me/microbuild.git", "git+https://gitlab.com/me/microbuild.git"),
    ("git@github.com:me/microbuild.git", "git+ssh://git@github.com/me/microbuild.git"),
    ("https://example.org/microbuild_mcu-0.2.0-py3-none-any.whl",
     "https://example.org/microbuild_mcu-0.2.0-py3-none-any.whl"),
    (".", "."), ("vendor/microbuild", "./vendor/microbuild"), ("./vendor/mb", "./vendor/mb"),
])
def test_install_sources(given, expected):
    import microbuild

    assert emit.install_source(given) == expected.replace("0.1.0", microbuild.__version__)
    github = yaml.safe_load(emit.github_actions(every_family_cells(), install=given))
    assert github["env"]["MICROBUILD_INSTALL"] == emit.install_source(given)
    gitlab = yaml.safe_load(emit.gitlab(every_family_cells(), install=given))
    assert gitlab["variables"]["MICROBUILD_INSTALL"] == emit.install_source(given)


@pytest.mark.parametrize("given, message", [
    ("microbuild==0.1.0", "unrelated project; this one is microbuild-mcu"),
    ("/home/me/microbuild", "exists only on this machine"),
    ("==0.1", "not a requirement"),
])
def test_bad_install_sources_are_refused(given, message):
    with pytest.raises(MicrobuildError, match=message):
        emit.install_source(given)


def test_every_job_installs_microbuild_from_the_chosen_source_with_a_cache():
    github = yaml.safe_load(emit.github_actions(every_family_cells(), emulate=False))
    for name, job in github["jobs"].items():
        runs = [s.get("run", "") for s in job["steps"]]
        assert any('python -m pip install "$MICROBUILD_INSTALL"' in r for r in runs), name
        assert not any("pip install -e" in r for r in runs)
        caches = [s["with"]["path"] for s in job["steps"] if s.get("uses") == emit.CACHE]
        assert "~/.cache/pip" in caches, name
    cell_steps = github["jobs"]["cells"]["steps"]
    (apt,) = [s["run"] for s in cell_steps if "apt-get install" in s.get("run", "")]
    cached = [s["with"]["path"] for s in cell_steps if s.get("uses") == emit.CACHE]
    # The folder apt downloads into is the folder cached.
    assert 'Dir::Cache::Archives="$HOME/.cache/microbuild-apt"' in apt
    assert "~/.cache/microbuild-apt" in cached

    gitlab = yaml.safe_load(emit.gitlab(every_family_cells()))
    assert gitlab["variables"]["PIP_CACHE_DIR"] == "$CI_PROJECT_DIR/.cache/pip"
    for name in ("cells", "merge"):
        job = gitlab[name]
        assert any('python -m pip install "$MICROBUILD_INSTALL"' in line
                   for line in job["before_script"])
        assert {".cache/pip"} <= {p for c in job["cache"] for p in c["paths"]}
    assert 'Dir::Cache::Archives="$CI_PROJECT_DIR/.cache/apt"' in gitlab["cells"]["before_script"][0]
    assert {"key": "apt-$MB_APT_KEY", "paths": [".cache/apt"]} in gitlab["cells"]["cache"]


def test_merge_jobs_wait_for_every_cell_and_publish_the_table():
    github = yaml.safe_load(emit.github_actions(every_family_cells(),
                                                baseline="ci/base line.json", max_growth="2%"))
    merge = github["jobs"]["merge"]
    assert merge["needs"] == ["cells"] and merge["if"] == "${{ !cancelled() }}"
    runs = [s["run"] for s in merge["steps"] if "run" in s]
    assert "microbuild ci --merge 'cells/**/cell.json' --markdown table.md --json table.json " \
           "--baseline 'ci/base line.json' --max-growth 2%\n" in runs
    assert any("$GITHUB_STEP_SUMMARY" in r for r in runs)
    assert any("$GITHUB_STEP_SUMMARY" in s.get("run", "") for s in github["jobs"]["cells"]["steps"])
    for name, job in github["jobs"].items():
        uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload")]
        assert uploads and all(s["if"] == "always()" for s in uploads), name
    assert github["jobs"]["cells"]["strategy"]["fail-fast"] is False

    gitlab = yaml.safe_load(emit.gitlab(every_family_cells()))
    merge = gitlab["merge"]
    assert merge["when"] == "always" and merge["stage"] == "merge"
    assert merge["script"] == ["microbuild ci --merge 'out/**/cell.json' --markdown table.md "
                               "--json table.json\n"]
    assert merge["artifacts"]["expose_as"] == "size table"
    assert merge["artifacts"]["paths"] == ["table.md", "table.json"]
    assert gitlab["cells"]["artifacts"]["when"] == "always"


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


def test_the_cli_emits_with_install_and_emulate(tmp_path, monkeypatch):
    from microbuild.cli import main

    (tmp_path / "models").mkdir()
    shutil.copy(REPO / TINY, tmp_path / "models" / "tiny_fc.tflite")
    monkeypatch.chdir(tmp_path)
    assert main(["ci", "--boards", "host,mps2-an385", "--models", "models/tiny_fc.tflite",
                 "--emit", "github-actions", "--emulate", "--install",
                 "microbuild-mcu==0.1.0"]) == 0
    document = yaml.safe_load((tmp_path / ".github/workflows/microbuild-ci.yml").read_text())
    assert document["env"]["MICROBUILD_INSTALL"] == "microbuild-mcu==0.1.0"
    entries = github_entries(document)
    assert {e["MB_MODEL_FILE"] for e in entries} == {"models/tiny_fc.tflite"}
    assert {e["MB_EMULATE"] for e in entries} == {"--emulate"}
    validate(document, "github-workflow")


# --- the jobs' commands, run here ---------------------------------------------------------------
#
# What stands in for the engine, and nothing more:
# * checkout: a fresh copy of the "repository" (boards/) per job; the models are reached through
#   models_root;
# * the runner's Python (setup-python / the image's python3): a fresh venv per job, on PATH;
# * PyPI: microbuild is the wheel built from this checkout (MICROBUILD_INSTALL points at it, the
#   job's own pip command installs it); its dependencies are this environment's, on PYTHONPATH
#   with every microbuild and pip entry left out, and pip runs with PIP_NO_INDEX;
# * apt: the apt step is skipped only when every package it installs is installed here (the test
#   is skipped, naming them, otherwise) -- it cannot run without the network;
# * cache actions: not run (their paths are checked against the scripts above);
# * upload/download: copying.

def _purelib_without_microbuild(root: Path) -> Path:
    """This environment's packages (numpy, scons, tflite-micro, ...) in a folder of symlinks,
    without microbuild itself (its editable install would pass for the wheel) and pip/setuptools
    (the job's venv has its own)."""
    folder = root / "deps"
    folder.mkdir()
    skip = re.compile(r"^(microbuild|__editable__|pip|setuptools|pkg_resources|_distutils_hack|"
                      r"distutils-precedence|wheel)")
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not skip.match(entry.name):
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.fixture(scope="module")
def pypi_stand_in(tmp_path_factory):
    """(wheel, deps): microbuild's wheel built from this checkout, and its dependencies."""
    root = tmp_path_factory.mktemp("pypi")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(root / "dist"), str(REPO)], check=True, capture_output=True,
                   timeout=600)
    return next((root / "dist").glob("*.whl")), _purelib_without_microbuild(root)


def runner_python(path: Path) -> Path:
    """The runner's Python for one job: a fresh venv; returns its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    return path / "bin"


def job_environment(bin_dir: Path, deps: Path, **variables: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("MICROBUILD_", "VIRTUAL_ENV", "PYTHON", "PIP_"))}
    environment.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(deps),
                       PIP_NO_INDEX="1", **variables)
    return environment


def bash(script: str, cwd: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=900)


def require_installed(packages: list[str]) -> None:
    """The apt step is skipped: only when all its packages are installed here already."""
    missing = [p for p in packages if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True
    ).stdout != "install ok installed"]
    if missing:
        pytest.skip(f"the apt step cannot run offline and {' '.join(missing)} is not installed")


def small_matrix(template: Path) -> list[Cell]:
    """host and mps2-an385 build tiny_fc and run it (--emulate: the host as a process,
    mps2-an385 in QEMU, both compared with TFLM); tiny-ram (a board of the repository's boards/,
    8 KiB of RAM) does not fit it, which must not fail its job."""
    boards = template / "boards"
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


def emitted_with_boards(template: Path, write, cells: list[Cell]) -> dict:
    """Emit with the repository's boards/ on the search path (tiny-ram is defined there)."""
    old = os.environ.get("MICROBUILD_BOARDS_PATH")
    os.environ["MICROBUILD_BOARDS_PATH"] = str(template / "boards")
    try:
        return yaml.safe_load(write(cells, models_root=str(REPO), emulate=True))
    finally:
        if old is None:
            del os.environ["MICROBUILD_BOARDS_PATH"]
        else:
            os.environ["MICROBUILD_BOARDS_PATH"] = old


def gitlab_variables(document: dict, project_dir: Path) -> dict[str, str]:
    """The file's variables as GitLab expands them, with $CI_PROJECT_DIR the job's folder."""
    return {"CI_PROJECT_DIR": str(project_dir),
            **{k: v.replace("$CI_PROJECT_DIR", str(project_dir))
               for k, v in document["variables"].items()}}


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


EXPECTED = {"host": ("ok", "bit-exact with TFLM"), "mps2-an385": ("ok", "bit-exact with TFLM"),
            "tiny-ram": ("does-not-fit", None)}


def check_cell(path: Path, cell: Cell) -> dict:
    (written,) = json.loads(path.read_text())
    status, emulated = EXPECTED[cell.board]
    assert (written["board"], written["status"]) == (cell.board, status), written
    assert written["extra"].get("emulated") == emulated, written
    return written


@needs_arm
def test_github_jobs_run_here(tmp_path, pypi_stand_in):
    wheel, deps = pypi_stand_in
    template = tmp_path / "repo"
    cells = small_matrix(template)
    workflow = emitted_with_boards(template, emit.github_actions, cells)
    variables = {**workflow["env"], "MICROBUILD_INSTALL": str(wheel)}
    job = workflow["jobs"]["cells"]
    downloads = tmp_path / "merge" / "cells"
    for entry, cell in zip(github_entries(workflow), cells):
        slug = entry["MB_SLUG"]
        workspace = tmp_path / slug
        summary = tmp_path / f"{slug}.summary.md"
        env = {k: MATRIX_EXPRESSION.sub(lambda m: entry[m.group(1)], v)
               for k, v in job["env"].items()}
        environment = None
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout"):
                shutil.copytree(template, workspace)
            elif uses.startswith("actions/setup-python"):
                environment = job_environment(runner_python(tmp_path / f"{slug}.venv"), deps,
                                              GITHUB_STEP_SUMMARY=str(summary),
                                              **variables, **env)
            elif "apt-get" in step.get("run", ""):
                require_installed(entry["MB_PACKAGES"].split())
            elif "run" in step:
                run = bash(step["run"], workspace, environment)
                assert run.returncode == 0, f"{slug}: {step['name']}\n{run.stdout}\n{run.stderr}"
            elif uses.startswith("actions/upload-artifact"):
                # download-artifact@v4 puts each artifact in cells/<name>/, the paths relative
                # to the folder they have in common (out/<id>/).
                name = MATRIX_EXPRESSION.sub(lambda m: entry[m.group(1)], step["with"]["name"])
                paths = MATRIX_EXPRESSION.sub(lambda m: entry[m.group(1)],
                                              step["with"]["path"]).split()
                root = os.path.commonpath([p.rstrip("/") for p in paths])
                copy_artifact(workspace, paths, downloads / name, root)
        # microbuild ran from the job's own install, not from this checkout.
        assert (tmp_path / f"{slug}.venv" / "bin" / "microbuild").is_file()
        written = check_cell(workspace / "out" / slug / "cell.json", cell)
        if written["status"] == "ok":
            assert ".venv" not in written["elf"]
            assert (downloads / f"cell-{slug}" / written["elf"]).is_file()
        assert f"| {cell.board} |" in summary.read_text()

    merge_dir = downloads.parent
    shutil.copytree(template / "boards", merge_dir / "boards")
    summary = tmp_path / "summary.md"
    environment = job_environment(runner_python(tmp_path / "merge.venv"), deps,
                                  GITHUB_STEP_SUMMARY=str(summary), **variables)
    for step in workflow["jobs"]["merge"]["steps"]:
        if "run" in step:
            run = bash(step["run"], merge_dir, environment)
            assert run.returncode == 0, f"merge: {step['name']}\n{run.stdout}\n{run.stderr}"
    table = json.loads((merge_dir / "table.json").read_text())
    assert {(c["board"], c["status"]) for c in table} == \
        {(board, status) for board, (status, _) in EXPECTED.items()}
    markdown = (merge_dir / "table.md").read_text()
    assert "does-not-fit" in markdown and "| mps2-an385 |" in markdown
    assert summary.read_text() == markdown


@needs_arm
def test_gitlab_jobs_run_here(tmp_path, pypi_stand_in):
    wheel, deps = pypi_stand_in
    template = tmp_path / "repo"
    cells = small_matrix(template)
    document = emitted_with_boards(template, emit.gitlab, cells)
    job = document["cells"]
    merge_dir = tmp_path / "merge"
    shutil.copytree(template, merge_dir)
    for entry, cell in zip(gitlab_entries(document), cells):
        slug = entry["MB_SLUG"]
        workspace = tmp_path / slug
        shutil.copytree(template, workspace)
        environment = job_environment(runner_python(tmp_path / f"{slug}.image"), deps, **{
            **gitlab_variables(document, workspace), "MICROBUILD_INSTALL": str(wheel), **entry})
        (apt, *setup) = job["before_script"]
        assert "apt-get install" in apt and not any("apt-get" in line for line in setup)
        require_installed(["python3", "python3-venv", *entry["MB_PACKAGES"].split()])
        # before_script and script share a shell (the venv stays active); after_script has its own.
        run = bash("\n".join(setup + job["script"]), workspace, environment)
        assert run.returncode == 0, f"{slug}\n{run.stdout}\n{run.stderr}"
        assert (workspace / ".venv" / "bin" / "microbuild").is_file()
        after = bash("\n".join(job["after_script"]), workspace, environment)
        assert after.returncode == 0, f"{slug}: after_script\n{after.stderr}"
        assert f"| {cell.board} |" in after.stdout  # the cell's row in the job log
        # GitLab restores artifacts at the paths they were uploaded from.
        paths = [p.replace("$MB_SLUG", slug) for p in job["artifacts"]["paths"]]
        copy_artifact(workspace, paths, merge_dir, ".")
        check_cell(merge_dir / "out" / slug / "cell.json", cell)

    merge = document["merge"]
    environment = job_environment(runner_python(tmp_path / "merge.image"), deps, **{
        **gitlab_variables(document, merge_dir), "MICROBUILD_INSTALL": str(wheel)})
    (apt, *setup) = merge["before_script"]
    assert "apt-get install" in apt
    require_installed(["python3", "python3-venv"])
    run = bash("\n".join(setup + merge["script"]), merge_dir, environment)
    assert run.returncode == 0, run.stdout + run.stderr
    after = bash("\n".join(merge["after_script"]), merge_dir, environment)
    assert "| tiny-ram |" in after.stdout
    for path in merge["artifacts"]["paths"]:
        assert (merge_dir / path).is_file()
    table = json.loads((merge_dir / "table.json").read_text())
    assert {(c["board"], c["status"]) for c in table} == \
        {(board, status) for board, (status, _) in EXPECTED.items()}


def test_a_job_that_stopped_early_shows_as_a_failed_cell(tmp_path):
    """apt or pip failed: the always-run step records the cell as failed, and the merge fails
    with that cell in the table instead of leaving it out."""
    cells = [Cell("mps2-an385", "gcc-riscv-elf", "tiny_fc", model_path=TINY)]
    workflow = yaml.safe_load(emit.github_actions(cells, models_root=str(REPO)))
    (entry,) = github_entries(workflow)
    (fallback,) = [s["run"] for s in workflow["jobs"]["cells"]["steps"]
                   if s.get("name", "").startswith("Record")]
    environment = {**os.environ, **entry}
    assert bash(fallback, tmp_path, environment).returncode == 0
    assert bash(fallback, tmp_path, environment).returncode == 0  # a no-op once it is there
    (record,) = json.loads((tmp_path / "out" / entry["MB_SLUG"] / "cell.json").read_text())
    cell = Cell.from_dict(record)
    assert (cell.key, cell.status, cell.model_path) == \
        (cells[0].key, "failed", str(REPO / TINY))
    assert "stopped before `microbuild ci`" in cell.message
    shutil.copytree(tmp_path / "out", tmp_path / "cells")

    (merge,) = [s["run"] for s in workflow["jobs"]["merge"]["steps"]
                if "--merge" in s.get("run", "")]
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    run = bash(merge, tmp_path, environment)
    assert run.returncode == 1, run.stderr
    table = json.loads((tmp_path / "table.json").read_text())
    assert [(c["board"], c["status"]) for c in table] == [("mps2-an385", "failed")]
    assert "stopped before" in (tmp_path / "table.md").read_text()


@needs_arm
def test_kernel_choices_reach_every_cell(tmp_path, monkeypatch):
    """`ci --emit --tuning LOG --variant OP=NAME`: each cell builds with the same choice, and the
    command runs here; a log that cannot be read is refused when emitting."""
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
    cells = api.plan_ci("mps2-an500", [workspace / "models" / "tiny_fc.tflite"],
                        ["gcc-arm-none-eabi"])
    path = api.emit_ci_workflow(cells, "github-actions", workspace / "ci.yml", tuning="tune.json",
                                variants={"ADD": "reference"})
    workflow = yaml.safe_load(path.read_text())
    (command,) = [s["run"] for s in workflow["jobs"]["cells"]["steps"]
                  if "microbuild ci --boards" in s.get("run", "")]
    assert "--tuning tune.json --variant ADD=reference" in command, command
    (entry,) = github_entries(workflow)
    environment = {**os.environ, **entry,
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = bash(command, workspace, environment)
    assert run.returncode == 0, run.stdout + run.stderr
    (cell,) = json.loads((workspace / "out" / entry["MB_SLUG"] / "cell.json").read_text())
    assert cell["status"] == "ok", cell

    with pytest.raises(MicrobuildError, match="missing.json"):
        api.emit_ci_workflow(cells, "gitlab", workspace / "g.yml", tuning="missing.json")


def test_install_without_emit_is_refused(capsys):
    from microbuild.cli import main

    assert main(["ci", "--install", "microbuild-mcu==0.1.0", "--models", str(REPO / TINY)]) != 0
    assert "use it with --emit" in capsys.readouterr().err
