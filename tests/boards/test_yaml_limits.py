"""Every YAML file microbuild reads (board files, microbuild.yaml) is read with limits: no aliases
(a "billion laughs" file is refused at once, also from ./boards/ during `boards list`), at most
1 MiB, 20,000 nodes and 64 levels; and a board file's problems are all reported in one run."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from microbuild import api
from microbuild.boards.source import MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES
from microbuild.manifest import ManifestError, load_manifest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def billion_laughs(name: str) -> str:
    """A board file whose last key stands for 10^10 strings through ten levels of aliases."""
    lines = [f"name: {name}", "extends: mps2-an500",
             "lol0: &lol0 [" + ", ".join(["lol"] * 10) + "]"]
    for level in range(1, 10):
        lines.append(f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def run_microbuild(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in a child limited to 4 GB of address space and a minute: on a loader without
    limits the laughs run out of memory or time there instead of taking the machine down."""
    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    env.pop("MICROBUILD_BOARDS_PATH", None)
    return subprocess.run([sys.executable, "-m", "microbuild", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, preexec_fn=limit_memory)


def validate(path: Path, text: str) -> list[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return [str(p) for p in api.validate_board_files([path])]


def test_billion_laughs_is_refused_by_validate_and_reported_broken_by_list(tmp_path):
    laughs = tmp_path / "boards" / "laughs.yaml"
    laughs.parent.mkdir()
    laughs.write_text(billion_laughs("laughs"))
    listed = run_microbuild(["boards", "list"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "mps2-an500" in listed.stdout and "laughs" not in listed.stdout  # the others listed
    assert listed.stderr.strip() == (f"error: {laughs}:4: YAML aliases are not allowed here "
                                     f"(*lol0): write the value out in full")
    validated = run_microbuild(["boards", "validate", str(laughs)], tmp_path)
    assert validated.returncode == 1
    assert validated.stderr.splitlines()[0] == (f"{laughs}:4: YAML aliases are not allowed here "
                                                f"(*lol0): write the value out in full")
    assert "Traceback" not in listed.stderr + validated.stderr


def test_one_alias_is_refused_with_its_line(tmp_path):
    (problem,) = validate(tmp_path / "defs" / "aliased.yaml", """
        name: aliased
        extends: mps2-an500
        qemu:
          args: &args [-icount, shift=0]
        title: *args
        """)
    assert problem.endswith("aliased.yaml:5: YAML aliases are not allowed here (*args): write the "
                            "value out in full")


def test_manifest_aliases_are_refused(tmp_path):
    manifest = tmp_path / "microbuild.yaml"
    manifest.write_text("board: &b host\nmodels: [*b]\n")
    with pytest.raises(ManifestError, match=r"microbuild.yaml:2: YAML aliases are not allowed here "
                                            r"\(\*b\)"):
        load_manifest(manifest)


def test_size_nodes_and_depth_are_limited(tmp_path):
    header = "name: big\nextends: mps2-an500\n"
    big = header + "init: |\n" + "  /* padding */\n" * (MAX_YAML_BYTES // 16)
    (problem,) = validate(tmp_path / "a" / "big.yaml", big)
    assert problem.endswith("big.yaml: larger than 1 MiB, the most microbuild reads from a board "
                            "file; is this the right file?")
    many = header + "x:\n" + "".join(f"  k{i}: {i}\n" for i in range(MAX_YAML_NODES // 2))
    (problem,) = validate(tmp_path / "b" / "big.yaml", many)
    assert f"more than {MAX_YAML_NODES:,} YAML nodes (keys and values)" in problem
    deep = header + "x: " + "[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1) + "\n"
    (problem,) = validate(tmp_path / "c" / "big.yaml", deep)
    assert problem.endswith(f"big.yaml:3: YAML nested more than {MAX_YAML_DEPTH} levels deep; "
                            f"microbuild reads at most that many levels")


def test_a_file_just_under_the_limits_is_read(tmp_path):
    """The limits leave room: a long init snippet and a few thousand keys are fine (only the
    unknown key is reported, once per key, and no more than the problem cap)."""
    text = ("name: roomy\nextends: mps2-an500\ninit: |\n" + "  /* comment */\n" * 60_000
            + "notes:\n" + "".join(f"  n{i}: {i}\n" for i in range(4000)))
    assert len(text) < MAX_YAML_BYTES
    (problem,) = validate(tmp_path / "roomy.yaml", text)
    assert "roomy.yaml:60004: notes: unknown key" in problem


GOOD = """
name: myboard
title: My board
vendor: me
cpu: {arch: armv7e-m, core: cortex-m4, endian: little, clock_hz: 48000000}
memory:
  regions:
    flash: {origin: 0x08000000, length: 12Q, access: rx}
    ram: {origin: 0x20000000, length: 64K, access: rwx}
    ram2: {origin: 0x2000F000, length: 64K, access: rwx}
  placement: {text: flash, rodata: flash, weights: flash, data: ram, bss: ram, stack: ram, heap: ram, workspace: rma}
toolchain: {family: gcc-arm-none-eabi, libc: newlib-nano}
init: "/* nothing */"
transport: {kind: serial, driver: stm32_usart, base: 0x40011000, baud: 115200}
timer: {driver: dwt, frequency_hz: 48000000}
flash:
  - runner: openocd
"""


def test_every_problem_of_a_board_is_reported_at_once(tmp_path):
    """A bad flash.length no longer hides the overlap and the misplaced workspace: the schema's
    problem and the checks of every part the schema accepted come in one run."""
    problems = validate(tmp_path / "myboard.yaml", GOOD)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "memory.regions.flash.length: '12Q' is not a size: write bytes as an integer, or like "
        "256K or 1M",
        "memory.regions.ram2: region 'ram2' [0x2000f000, 0x2001f000) overlaps region 'ram' "
        "[0x20000000, 0x20010000)",
        "memory.placement.workspace: workspace is placed in 'rma', which is not a region here "
        "(did you mean ram or ram2?); regions: flash, ram, ram2"]
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in problems] == ["7", "9", "10"]
