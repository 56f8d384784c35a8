"""Boards open where they differ: driver, runner and architecture names checked against what
exists (with did-you-mean) instead of closed lists; a board's own driver files; `extends:` that
removes keys (null) and replaces mappings (!replace), with errors that name both the file that
set a value and the board that inherited it; and `boards list` with a broken file beside good
ones."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.cli import main
from microbuild.errors import BoardError


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def problems(path: Path) -> list[str]:
    return [str(p) for p in api.validate_board_files([path])]


# --- names checked against what exists ----------------------------------------------------------

def test_unknown_driver_names_suggest_the_built_in_ones(tmp_path):
    path = write(tmp_path / "boards" / "b.yaml", """
        name: b
        extends: mps2-an385
        transport:
          driver: cmsdk_uat
        timer:
          driver: sistick
        """)
    console, timer = problems(path)
    assert console.startswith(f"{path}:4: transport.driver: no built-in console driver "
                              "'cmsdk_uat' (did you mean cmsdk_uart or "
                              "esp32_uart or stm32_usart?); built-in: apollo3_uart, avr_usart, "
                              "cmsdk_uart,")
    assert console.endswith("or name a C file of the board's own, relative to the board file "
                            "(e.g. my_console.c)")
    assert timer.startswith(f"{path}:6: timer.driver: no built-in timer driver 'sistick' (did "
                            "you mean systick?)")


def test_unknown_arch_suggests_the_known_ones(tmp_path):
    path = write(tmp_path / "boards" / "b.yaml", "name: b\nextends: mps2-an385\ncpu:\n"
                                                 "  arch: armv7em\n")
    (problem,) = problems(path)
    assert problem.startswith(f"{path}:4: cpu.arch: no toolchain microbuild knows builds for "
                              "'armv7em' (did you mean armv7e-m or armv7-m")
    assert "known: armv6-m, armv7-m, armv7e-m" in problem


def test_a_driver_file_that_does_not_exist(tmp_path):
    path = write(tmp_path / "boards" / "b.yaml", "name: b\nextends: mps2-an385\ntransport:\n"
                                                 "  driver: drivers/missing_uart.c\n")
    (problem,) = problems(path)
    assert problem == (f"{path}:4: transport.driver: no file "
                       f"{(tmp_path / 'boards' / 'drivers' / 'missing_uart.c').resolve()} (a "
                       "board's own console source is relative to the board file that names it)")


def test_own_files_are_relative_to_the_file_that_names_them(tmp_path, monkeypatch):
    """A team's board (in one folder) names its driver; a user's board in another folder extends
    it: the driver is still the team's file."""
    team = tmp_path / "team"
    write(team / "uart" / "team_uart.c", "/* the team's driver */\n")
    write(team / "teamboard.yaml", """
        name: teamboard
        extends: mps2-an385
        transport:
          driver: uart/team_uart.c
        """)
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", str(team))
    write(tmp_path / "boards" / "mine.yaml", "name: mine\nextends: teamboard\ntitle: Mine\n")
    board = load_board("mine")
    assert board.local_sources == {"console": (team / "uart" / "team_uart.c").resolve()}


def test_init_snippet_and_init_source_exclude_each_other(tmp_path):
    write(tmp_path / "boards" / "init.c", "/* mb_board_init */\n")
    both = write(tmp_path / "boards" / "b.yaml", "name: b\nextends: mps2-an385\n"
                                                 "init_source: init.c\n")
    (problem,) = problems(both)
    assert problem == (f"{both}:3: init_source: a board has either an `init:` snippet or an "
                       "`init_source:` file, not both; write `init: null` to drop an inherited "
                       "snippet")
    fixed = write(tmp_path / "boards" / "c.yaml", "name: c\nextends: mps2-an385\ninit: null\n"
                                                  "init_source: init.c\n")
    assert problems(fixed) == []
    assert load_board(str(fixed)).local_sources == {"init": (tmp_path / "boards" / "init.c").resolve()}


def test_a_console_init_snippet_is_refused_beside_an_init_source_file(tmp_path):
    """The board's own init file replaces the generated mb_board_init, which is what runs
    `transport.init:`: the snippet would be dropped silently, so it is refused."""
    write(tmp_path / "boards" / "init.c", "/* mb_board_init */\n")
    path = write(tmp_path / "boards" / "d.yaml", "name: d\nextends: nucleo-f746zg\ninit: null\n"
                                                 "init_source: init.c\n")
    (problem,) = problems(path)
    nucleo = load_board("nucleo-f746zg").files[0]
    assert problem.startswith(f"{nucleo}:") and f"(inherited by {path})" in problem
    assert " transport.init: the board's `init_source:` file defines mb_board_init" in problem
    assert "`transport: {init: null}` drops an inherited snippet" in problem
    fixed = write(tmp_path / "boards" / "e.yaml", "name: e\nextends: nucleo-f746zg\ninit: null\n"
                                                  "init_source: init.c\ntransport: {init: null}\n")
    assert problems(fixed) == []


# --- extends: null and !replace -------------------------------------------------------------------

def test_null_removes_an_inherited_key(tmp_path):
    path = write(tmp_path / "boards" / "small.yaml", """
        name: small
        extends: stm32f746
        title: F746 without ITCM or Zephyr
        memory:
          regions:
            itcm: null
        zephyr: null
        """)
    board = load_board(str(path))
    assert set(board.regions) == {"flash", "dtcm", "sram1", "sram2"}
    assert board.zephyr is None and "zephyr" not in board.data
    assert board.regions["dtcm"].length == 64 * 1024  # siblings kept


def test_null_on_a_key_the_parent_does_not_have(tmp_path):
    path = write(tmp_path / "boards" / "b.yaml", "name: b\nextends: stm32f746\nmemory:\n"
                                                 "  regions:\n    itcn: null\n")
    with pytest.raises(BoardError) as info:
        load_board(str(path))
    assert str(info.value).startswith(
        f"{path}:5: memory.regions.itcn: null removes an inherited key, but 'stm32f746' (")
    assert "has no such key (did you mean itcm or dtcm?)" in str(info.value)


def test_replace_takes_a_mapping_whole(tmp_path):
    merged = write(tmp_path / "boards" / "merged.yaml", """
        name: merged
        extends: mps2-an385
        memory:
          regions:
            extra: {origin: 0x60000000, length: 1M, access: rwx}
        """)
    assert set(load_board(str(merged)).regions) == {"code", "sram", "extra"}
    replaced = write(tmp_path / "boards" / "replaced.yaml", """
        name: replaced
        extends: mps2-an385
        memory: !replace
          regions:
            rom: {origin: 0x00000000, length: 256K, access: rx}
            ram: {origin: 0x20000000, length: 64K, access: rwx}
          placement: {text: rom, rodata: rom, weights: rom, data: ram, bss: ram, stack: ram,
                      heap: ram, workspace: ram}
        """)
    board = load_board(str(replaced))
    assert set(board.regions) == {"rom", "ram"}
    assert board.stack_size == 4096  # the inherited 16K went with the replaced mapping
    assert "stack_size" not in board.data["memory"]
    assert api.board_yaml(board).count("!replace") == 0  # printed as plain YAML


def test_replace_on_a_list_is_an_error_with_its_line(tmp_path):
    path = write(tmp_path / "boards" / "b.yaml", "name: b\nextends: mps2-an385\nflash: !replace\n"
                                                 "  - runner: qemu\n")
    with pytest.raises(BoardError, match=rf"{path}:3: YAML syntax error: !replace goes on a "
                                         r"mapping .* not on a sequence"):
        load_board(str(path))


# --- errors name the file that set a value and the board that inherited it ------------------------

def test_an_overlap_blames_the_region_the_child_changed(tmp_path):
    """The child grows DTCM into SRAM1: the error points at the child's line, not at SRAM1 in
    the built-in file the user never opened (which it names as the other party)."""
    path = write(tmp_path / "boards" / "big-dtcm.yaml", """
        name: big-dtcm
        extends: stm32f746
        memory:
          regions:
            dtcm: {origin: 0x20000000, length: 128K, access: rwx}
        """)
    (problem,) = problems(path)
    builtin = load_board("stm32f746").files[0]
    assert problem.startswith(f"{path}:5: memory.regions.dtcm: region 'dtcm' [0x20000000, "
                              "0x20020000) overlaps region 'sram1' [0x20010000, 0x2004c000) "
                              f"(set at {builtin}:")
    assert "inherited by" not in problem


def test_a_problem_in_an_inherited_value_names_the_inheriting_board(tmp_path):
    """Removing SRAM2 leaves the parent's `heap: sram2` pointing nowhere: the line is the
    parent's, and the message says which board inherited it."""
    path = write(tmp_path / "boards" / "no-sram2.yaml", "name: no-sram2\nextends: stm32f746\n"
                                                        "memory:\n  regions:\n    sram2: null\n")
    (problem,) = problems(path)
    builtin = load_board("stm32f746").files[0]
    assert problem.startswith(f"{builtin}:")
    assert "memory.placement.heap: heap is placed in 'sram2', which is not a region here" in problem
    assert problem.endswith(f"(inherited by {path})")


# --- boards list with a broken file ---------------------------------------------------------------

def test_boards_list_shows_the_others_and_one_line_for_a_broken_file(tmp_path, capsys):
    write(tmp_path / "boards" / "good.yaml", "name: good\nextends: mps2-an385\ntitle: Good\n")
    bad = write(tmp_path / "boards" / "bad.yaml", "name: bad\nextends: mps2-an385\ncpu:\n"
                                                  "  clock_hz: fast\ntitle: 5\n")
    broken = write(tmp_path / "boards" / "broken.yaml", "name: broken\ncpu: [\n")
    assert main(["boards", "list"]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "mps2-an385" in out and "lm3s6965evb" in out
    assert " bad " not in out and "broken" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"error: {bad}:5: title: expected a string")
    assert lines[0].endswith(f"(and 1 more); `microbuild boards validate {bad}` lists all")
    assert lines[1].startswith(f"error: {broken}:") and "YAML syntax error" in lines[1]
