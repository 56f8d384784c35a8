"""`microbuild ci`: the matrix, its statuses, the table checked against the ELF files, the
baseline check, merging per-cell files, the shared build cache and --emulate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from microbuild import api
from microbuild.ci import report
from microbuild.ci.cells import Cell
from microbuild.ci.matrix import select_boards
from microbuild.cli import main
from microbuild.errors import MicrobuildError

MODELS = Path(__file__).resolve().parent.parent / "models"
TINY = str(MODELS / "tiny_fc.tflite")
VWW = str(MODELS / "mobilenet_v1_025_vww.tflite")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with ./boards on the search path and no MICROBUILD_* settings leaking in."""
    for name in ("MICROBUILD_BOARDS_PATH", "MICROBUILD_VERBOSE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "boards").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cells(path: Path) -> dict[tuple, dict]:
    return {(c["board"], c["toolchain"], c["model"]): c for c in json.loads(path.read_text())}


def test_board_selection_by_glob():
    assert select_boards("mps2-*") == ["mps2-an385", "mps2-an386", "mps2-an500"]
    assert "host" in select_boards("all") and "stm32f746" in select_boards("all")
    with pytest.raises(MicrobuildError, match="no board matches"):
        select_boards("nothing-*")


def test_sizes_in_the_table_match_the_elf(project, capsys):
    status = main(["ci", "--boards", "mps2-an385,host", "--models", TINY, "--out", "ci",
                   "--cache", str(project / "cache"), "--json", "cells.json",
                   "--markdown", "cells.md", "-q"])
    assert status == 0, capsys.readouterr()
    cells = _cells(project / "cells.json")
    # mps2-an385 lists gcc and clang; host lists host-gcc and host-clang.
    assert set(cells) == {("mps2-an385", "gcc-arm-none-eabi", "tiny_fc"),
                          ("mps2-an385", "clang", "tiny_fc"), ("host", "host-gcc", "tiny_fc"),
                          ("host", "host-clang", "tiny_fc")}
    assert all(c["status"] == "ok" for c in cells.values())
    for toolchain in ("gcc-arm-none-eabi", "clang"):
        cell = cells[("mps2-an385", toolchain, "tiny_fc")]
        sections = {}
        lines = subprocess.run(["arm-none-eabi-size", "-A", cell["elf"]], capture_output=True,
                               text=True, check=True).stdout.splitlines()
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit():
                sections[parts[0]] = int(parts[1])
        # Code: the vector table, the reset handler's boot section (it stays in the boot region
        # when code runs from RAM) and .text.
        assert cell["text"] == (sections[".mb_vectors"] + sections.get(".mb_boot", 0)
                                + sections[".text"])
        assert cell["rodata"] == sum(sections.get(s, 0) for s in (
            ".rodata", ".ARM.exidx", ".mb_weights", ".mb_copy_table", ".mb_zero_table"))
        assert cell["data"] == sections.get(".data", 0)
        assert cell["bss"] == sum(sections.get(s, 0) for s in (
            ".bss", ".mb_workspace", ".stack", ".heap"))
        # RAM is the 4 MiB sram region, flash the 4 MiB code region.
        assert cell["ram_size"] == cell["flash_size"] == 4 * 1024 * 1024
        assert cell["ram_used"] == cell["data"] + cell["bss"]
        assert cell["flash_used"] == cell["text"] + cell["rodata"] + cell["data"]
    md = (project / "cells.md").read_text()
    assert "| mps2-an385 | clang | tiny_fc | aot |" in md and "4 ok" in md
    shown = capsys.readouterr().out
    assert "mps2-an385" in shown and "4 ok" in shown


def test_a_model_that_does_not_fit_is_not_a_failure(project, capsys):
    (project / "boards" / "tiny-ram.yaml").write_text(
        "name: tiny-ram\nextends: mps2-an385\ntitle: 16 KiB of RAM\n"
        "toolchain: {family: gcc-arm-none-eabi, prefix: arm-none-eabi-, libc: newlib-nano, "
        "cflags: [-O2]}\n"
        "memory:\n  regions:\n    sram: {origin: 0x20000000, length: 16K, access: rwx}\n"
        "  stack_size: 2K\n")
    status = main(["ci", "--boards", "tiny-ram", "--models", TINY, VWW, "--out", "ci",
                   "--no-cache", "--json", "cells.json", "-q"])
    assert status == 0
    cells = _cells(project / "cells.json")
    assert cells[("tiny-ram", "gcc-arm-none-eabi", "tiny_fc")]["status"] == "ok"
    vww = cells[("tiny-ram", "gcc-arm-none-eabi", "mobilenet_v1_025_vww")]
    assert vww["status"] == "does-not-fit"
    assert "region sram overflows by" in vww["message"]
    # The sizes of the cell that does not fit are still reported: 54 KiB of workspace in 16 KiB.
    assert vww["ram_used"] > vww["ram_size"] == 16 * 1024
    assert "does-not-fit" in capsys.readouterr().out


def test_a_build_error_fails_its_cells_and_the_others_still_build(project, capsys):
    (project / "boards" / "broken.yaml").write_text(
        "name: broken\nextends: mps2-an385\ntitle: init snippet with a C error\n"
        "toolchain: {family: gcc-arm-none-eabi, prefix: arm-none-eabi-, libc: newlib-nano, "
        "cflags: [-O2]}\n"
        "init: |\n  this is not C;\n")
    status = main(["ci", "--boards", "broken,mps2-an385", "--toolchains", "gcc-arm-none-eabi",
                   "--models", TINY, "--out", "ci", "--no-cache", "--json", "cells.json", "-q"])
    assert status == 1
    cells = _cells(project / "cells.json")
    broken = cells[("broken", "gcc-arm-none-eabi", "tiny_fc")]
    assert broken["status"] == "failed"
    assert "mb_board_init.c:" in broken["message"] and "error" in broken["message"]
    assert cells[("mps2-an385", "gcc-arm-none-eabi", "tiny_fc")]["status"] == "ok"
    assert "failed: broken" in capsys.readouterr().err


def test_a_toolchain_the_board_does_not_list_is_not_applicable(project):
    cells = api.plan_ci("host", [TINY], ["gcc-arm-none-eabi"])
    assert [c.status for c in cells] == ["not-applicable"]
    assert "does not list toolchain gcc-arm-none-eabi" in cells[0].message


def test_baseline_growth_fails_and_the_threshold_allows_it(project, capsys):
    args = ["ci", "--boards", "host", "--toolchains", "host-gcc", "--models", TINY, "--out", "ci",
            "--no-cache", "--json", "now.json", "-q"]
    assert main(args) == 0
    baseline = json.loads((project / "now.json").read_text())
    baseline[0]["text"] -= 100  # pretend the code grew by 100 bytes since the baseline
    (project / "base.json").write_text(json.dumps(baseline))
    capsys.readouterr()
    assert main(args + ["--baseline", "base.json", "--markdown", "t.md"]) == 1
    err = capsys.readouterr().err
    assert "grew:" in err and "text" in err and "+100 B" in err
    assert "Growth over the baseline" in (project / "t.md").read_text()
    assert main(args + ["--baseline", "base.json", "--max-growth", "128"]) == 0
    assert main(args + ["--baseline", "base.json", "--max-growth", "99"]) == 1


def test_merge_reads_ci_cells_and_build_json(project, capsys):
    assert main(["build", "--board", "host", "--model", TINY, "-o", "b", "--json"]) == 0
    (project / "build.json").write_text(capsys.readouterr().out)
    report.write_json(project / "other.json", [
        Cell(board="mps2-an385", toolchain="clang", model="x", status="failed", message="boom")])
    status = main(["ci", "--merge", "build.json", "other.json", "--json", "merged.json"])
    assert status == 1  # the merged table holds a failed cell
    merged = _cells(project / "merged.json")
    assert merged[("host", "host-gcc", "tiny_fc")]["status"] == "ok"
    assert merged[("host", "host-gcc", "tiny_fc")]["rodata"] > 304
    assert merged[("mps2-an385", "clang", "x")]["message"] == "boom"


def test_the_cache_serves_a_fresh_output_folder(project):
    cache = project / "cache"
    first = api.run_ci(api.plan_ci("mps2-an385", [TINY], ["gcc-arm-none-eabi"]), project / "a",
                       cache=cache)
    assert first[0].status == "ok"
    again = api.run_ci(api.plan_ci("mps2-an385", [TINY], ["gcc-arm-none-eabi"]), project / "b",
                       cache=cache)
    assert again[0].status == "ok"
    log = (project / "b" / "ci.log").read_text()
    assert "Retrieved" in log and "  CC " not in log  # everything came from the cache
    assert again[0].text == first[0].text


def test_emulate_runs_cells_against_tflm(project):
    cells = api.run_ci(api.plan_ci("mps2-an385,host,stm32f746", [TINY], None), project / "ci",
                       cache=None, emulate=True)
    by = {(c.board, c.toolchain): c for c in cells}
    assert by[("mps2-an385", "gcc-arm-none-eabi")].extra["emulated"] == "bit-exact with TFLM"
    assert by[("mps2-an385", "clang")].extra["emulated"] == "bit-exact with TFLM"
    assert by[("host", "host-gcc")].extra["emulated"] == "bit-exact with TFLM"
    assert by[("stm32f746", "gcc-arm-none-eabi")].extra["emulated"] == "not emulated (real board)"
    assert all(c.status == "ok" for c in cells)


def test_ci_without_models_outside_microbuilds_checkout_is_an_error(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["ci", "--boards", "host", "--out", "ci", "-q"]) != 0
    assert "name the models to build with --models" in capsys.readouterr().err
    assert not (tmp_path / "ci").exists()
