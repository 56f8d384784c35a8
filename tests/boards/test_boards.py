"""Board definitions: built-ins, inheritance, search path, shadowing, and every kind of bad input."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from microbuild import api
from microbuild.boards import available_boards, format_size, load_board, parse_size
from microbuild.boards.loader import builtin_boards_dir
from microbuild.cli import main
from microbuild.errors import BoardError

from board_support import MINIMAL_BOARD

REQUIRED_BOARDS = ["host", "host-clang", "mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547",
                   "netduinoplus2", "riscv32-virt", "stm32f746", "nucleo-f746zg", "nrf52840dk",
                   "rp2040-pico", "sparkfun-edge", "atmega328p", "nucleo-h743zi"]


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    """Run each test in an empty folder with no user board path, so only built-ins are found."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


# A complete minimal board used as the starting point of the bad-input cases below. Line numbers
# in the expected messages refer to this text.
GOOD = "\n" + MINIMAL_BOARD + """\
flash:
  - runner: openocd
"""


def problems_of(tmp_path, text: str, name: str = "myboard") -> list[str]:
    path = write(tmp_path / "defs" / f"{name}.yaml", text)
    return [str(p) for p in api.validate_board_files([path])]


# --- built-in boards ---------------------------------------------------------------------------

def test_every_required_board_ships_and_validates():
    names = available_boards()
    for name in REQUIRED_BOARDS:
        assert name in names, f"{name} missing from board_defs/"
    problems = api.validate_board_files(sorted(builtin_boards_dir().glob("*.yaml")))
    assert problems == []


def test_real_memory_maps():
    f746 = load_board("stm32f746")
    regions = f746.regions
    assert (regions["flash"].origin, regions["flash"].length) == (0x08000000, 1024 * 1024)
    assert (regions["dtcm"].origin, regions["dtcm"].length) == (0x20000000, 64 * 1024)
    assert (regions["sram1"].origin, regions["sram1"].length) == (0x20010000, 240 * 1024)
    sram_total = sum(regions[r].length for r in ("dtcm", "sram1", "sram2"))
    assert sram_total == 320 * 1024
    assert regions["sram1"].end == regions["sram2"].origin
    assert f746.region_for("weights").name == "flash"
    assert f746.default_runner == "stlink"

    an547 = load_board("mps3-an547")
    assert an547.regions["itcm"].length == an547.regions["dtcm"].length == 512 * 1024
    assert an547.transport["base"] == 0x59303000

    virt = load_board("riscv32-virt")
    assert virt.regions["ram"].origin == 0x80000000 and virt.toolchain.libc == "picolibc"
    assert load_board("rp2040-pico").regions["sram"].length == 264 * 1024
    assert load_board("nrf52840dk").regions["ram"].length == 256 * 1024
    assert load_board("netduinoplus2").transport["driver"] == "stm32_usart"

    # AVR: ELF data addresses are 0x800000 + the data address; SRAM starts at data address 0x100.
    avr = load_board("atmega328p")
    assert (avr.regions["flash"].origin, avr.regions["flash"].length) == (0, 32 * 1024)
    assert (avr.regions["ram"].origin, avr.regions["ram"].length) == (0x800100, 2048)
    assert avr.toolchain.family == "avr-gcc" and avr.toolchain.libc == "avr-libc"
    assert avr.region_for("weights").name == "ram"  # avr-gcc reads const data from RAM
    assert avr.default_runner == "simavr" and avr.timer["frequency_hz"] == avr.cpu["clock_hz"]


def test_host_boards_have_no_memory_map():
    host = load_board("host")
    assert host.is_host and host.regions == {} and host.default_runner == "host"
    assert load_board("host-clang").toolchain.family == "host-clang"


# --- inheritance -------------------------------------------------------------------------------

def test_extends_merges_mappings_and_replaces_lists():
    nucleo = load_board("nucleo-f746zg")
    base = load_board("stm32f746")
    assert nucleo.cpu == base.cpu  # inherited whole
    assert nucleo.regions == base.regions
    assert nucleo.transport["base"] == 0x40004800  # overridden key ...
    assert nucleo.transport["driver"] == "stm32_usart"  # ... siblings kept (deep merge)
    assert [r.args for r in nucleo.runners if r.runner == "openocd"] == [{"config": ["board/st_nucleo_f7.cfg"]}]
    assert nucleo.platformio == {"platform": "ststm32", "board": "nucleo_f746zg", "framework": ""}
    assert [p.name for p in nucleo.files] == ["nucleo-f746zg.yaml", "stm32f746.yaml"]
    assert "extends" not in nucleo.data


def test_mps2_family_written_once():
    an500 = load_board("mps2-an500")
    assert an500.core == "cortex-m7" and an500.fpu == "fpv5-d16"
    assert an500.qemu["machine"] == "mps2-an500"
    assert an500.qemu["args"] == ["-icount", "shift=0"]  # inherited from mps2-an385
    assert set(an500.regions) == {"code", "sram", "psram"}


def test_errors_in_an_inherited_value_point_at_the_child_file(tmp_path):
    path = write(tmp_path / "defs" / "child.yaml", """
        name: child
        extends: mps2-an385
        title: Child
        cpu:
          clock_hz: fast
        """)
    assert [str(p) for p in api.validate_board_files([path])] == [
        f"{path}:5: cpu.clock_hz: expected an integer, got a string"]


def test_extends_unknown_board(tmp_path):
    path = write(tmp_path / "defs" / "child.yaml", "name: child\nextends: stm32f764\ntitle: x\n")
    (problem,) = api.validate_board_files([path])
    assert problem == (f"{path}:2: extends: no board named 'stm32f764' on the search path "
                       f"(did you mean stm32f746?); `microbuild boards list` shows the boards there are")


def test_extends_cycle(tmp_path, monkeypatch):
    write(tmp_path / "boards" / "a.yaml", "name: a\nextends: b\n")
    write(tmp_path / "boards" / "b.yaml", "name: b\nextends: a\n")
    with pytest.raises(BoardError, match=r"boards/b.yaml:2: extends: inheritance cycle: .*a.yaml -> .*b.yaml -> .*a.yaml"):
        load_board("a")


# --- search path and shadowing -----------------------------------------------------------------

def test_env_path_and_local_boards_folder(tmp_path, monkeypatch):
    write(tmp_path / "team" / "teamboard.yaml", GOOD.replace("myboard", "teamboard"))
    write(tmp_path / "boards" / "mine.yaml", "name: mine\nextends: teamboard\ntitle: Mine\n")
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", str(tmp_path / "team"))
    assert load_board("teamboard").title == "My board"
    mine = load_board("mine")
    assert mine.title == "Mine" and mine.core == "cortex-m4"
    assert {"teamboard", "mine", "host"} <= set(available_boards())


def test_user_file_shadows_builtin(tmp_path):
    write(tmp_path / "boards" / "host.yaml", """
        name: host
        extends: mps2-an385
        title: Not the host any more
        """)
    board = load_board("host")
    assert board.title == "Not the host any more" and board.core == "cortex-m3"
    assert available_boards()["host"] == tmp_path / "boards" / "host.yaml"


def test_user_file_can_extend_the_builtin_it_shadows(tmp_path):
    write(tmp_path / "boards" / "stm32f746.yaml", """
        name: stm32f746
        extends: stm32f746
        title: My overclocked F746
        cpu: {clock_hz: 216000000}
        """)
    board = load_board("stm32f746")
    assert board.cpu["clock_hz"] == 216000000 and board.title == "My overclocked F746"
    assert board.regions["sram1"].length == 240 * 1024
    assert board.files[1] == builtin_boards_dir() / "stm32f746.yaml"


def test_later_env_folder_shadows_earlier(tmp_path, monkeypatch):
    write(tmp_path / "one" / "x.yaml", GOOD.replace("myboard", "x").replace("My board", "one"))
    write(tmp_path / "two" / "x.yaml", GOOD.replace("myboard", "x").replace("My board", "two"))
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", f"{tmp_path / 'one'}:{tmp_path / 'two'}")
    assert load_board("x").title == "two"


def test_unknown_board_suggests_close_names():
    with pytest.raises(BoardError) as info:
        load_board("stm32f74")
    assert str(info.value).startswith("no board named 'stm32f74' (did you mean stm32f746?).")


# --- bad input, each with its exact message ----------------------------------------------------

def test_good_board_has_no_problems(tmp_path):
    assert problems_of(tmp_path, GOOD) == []


def test_yaml_syntax_error_has_file_and_line(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("  core: cortex-m4", "  core: [cortex-m4"))
    path = tmp_path / "defs" / "myboard.yaml"
    assert problem.startswith(f"{path}:7: YAML syntax error: ")


def test_wrong_type(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("clock_hz: 48000000", "clock_hz: 48 MHz"))
    assert problem.endswith("myboard.yaml:8: cpu.clock_hz: expected an integer, got a string")


def test_init_snippet_must_be_a_string(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace('init: "/* nothing */"', "init: {fpu: on}"))
    assert problem.endswith("myboard.yaml:17: init: expected a string, got a mapping")


def test_overlapping_regions(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("origin: 0x20000000, length: 64K",
                                                    "origin: 0x0803F000, length: 64K"))
    assert problem.endswith("myboard.yaml:12: memory.regions.ram: region 'ram' [0x0803f000, 0x0804f000) "
                            "overlaps region 'flash' [0x08000000, 0x08040000)")


def test_placement_onto_missing_region(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("workspace: ram", "workspace: rma"))
    assert problem.endswith("myboard.yaml:13: memory.placement.workspace: workspace is placed in 'rma', "
                            "which is not a region here (did you mean ram?); regions: flash, ram")


def test_writable_section_in_read_only_region(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("stack: ram", "stack: flash"))
    assert problem.endswith("memory.placement.stack: stack is written at run time but region 'flash' "
                            "is rx (not writable); place it in a rw/rwx region")


def test_unknown_key_suggests_the_right_one(tmp_path):
    unknown, missing = problems_of(tmp_path, GOOD.replace("  placement:", "  placment:"))
    assert "myboard.yaml:13: memory.placment: unknown key (did you mean placement?)" in unknown
    assert missing.endswith("myboard.yaml:9: memory: missing required key 'placement'")


def test_missing_required_key(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("  libc: newlib-nano\n", ""))
    assert problem.endswith("myboard.yaml:14: toolchain: missing required key 'libc'")


def test_enum_value_suggests(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("endian: little", "endian: litle"))
    assert "myboard.yaml:7: cpu.endian: 'litle' is not one of: little, big" in problem
    assert problem.endswith("(did you mean little?)")


def test_runner_names_are_checked_against_the_registered_runners(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("runner: openocd", "runner: opencd"))
    assert "myboard.yaml:21: flash[0].runner: no runner 'opencd' (did you mean openocd" in problem
    assert "esptool" in problem.split("runners: ")[1]  # the list names what there is


def test_bad_size(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("length: 64K", "length: 64Q"))
    assert problem.endswith("myboard.yaml:12: memory.regions.ram.length: '64Q' is not a size: "
                            "write bytes as an integer, or like 256K or 1M")


def test_duplicate_key(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("vendor: me\n", "vendor: me\nvendor: you\n"))
    assert problem.endswith("myboard.yaml:4: vendor: duplicate key (first set on line 3); remove one")


def test_name_must_match_file(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD, name="other")
    assert problem.endswith("other.yaml:1: name: 'myboard' differs from the file name 'other.yaml'; "
                            "a board's name is its file name")


def test_toolchain_must_fit_the_cpu(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("family: gcc-arm-none-eabi", "family: gcc-riscv-elf"))
    assert problem.endswith("myboard.yaml:15: toolchain.family: toolchain 'gcc-riscv-elf' cannot build "
                            "for armv7e-m; it builds for rv32imac, rv32imc, rv32im")


def test_memory_required_except_on_host(tmp_path):
    text = GOOD.split("memory:")[0] + "toolchain:" + GOOD.split("toolchain:")[1]
    (problem,) = problems_of(tmp_path, text)
    assert problem.endswith("myboard.yaml:1: (top level): missing required key 'memory'")


def test_not_a_mapping_and_empty_file(tmp_path):
    assert problems_of(tmp_path, "- a\n- b\n")[0].endswith(
        "myboard.yaml:1: a board file must be a mapping of keys (name:, cpu:, ...), not a list")
    assert "the file is empty" in problems_of(tmp_path, "\n")[0]


def test_parse_size():
    assert parse_size("256K") == 256 * 1024 and parse_size("1M") == 1 << 20
    assert parse_size("64KiB") == 64 * 1024 and parse_size(100) == 100
    with pytest.raises(ValueError):
        parse_size("lots")


# --- CLI ---------------------------------------------------------------------------------------

def test_cli_validate_reports_every_problem_and_exits_1(tmp_path, capsys):
    bad = write(tmp_path / "defs" / "myboard.yaml",
                GOOD.replace("workspace: ram", "workspace: rma").replace("clock_hz: 48000000", "clock_hz: x"))
    assert main(["boards", "validate", str(bad)]) == 1
    err = capsys.readouterr().err.splitlines()
    # Schema problems first, then what the checks of the rest of the file found: all at once.
    assert err == [f"{bad}:8: cpu.clock_hz: expected an integer, got a string",
                   f"{bad}:13: memory.placement.workspace: workspace is placed in 'rma', which is "
                   f"not a region here (did you mean ram?); regions: flash, ram",
                   "2 problem(s) in 1 file(s)"]
    good = write(tmp_path / "defs2" / "myboard.yaml", GOOD)
    assert main(["boards", "validate", str(good)]) == 0


def test_cli_unknown_board_is_a_message_not_a_traceback(capsys):
    assert main(["boards", "show", "mps2-an50"]) == 1
    err = capsys.readouterr().err
    assert "error: no board named 'mps2-an50' (did you mean" in err and "Traceback" not in err


def test_cli_show_prints_resolved_yaml(capsys):
    assert main(["boards", "show", "mps2-an386"]) == 0
    text = capsys.readouterr().out
    data = yaml.safe_load(text)
    assert data["cpu"]["core"] == "cortex-m4" and data["transport"]["base"] == 0x40004000
    assert "base: 0x40004000" in text and "extends" not in data


def test_cli_list_shows_every_board(capsys):
    assert main(["boards", "list"]) == 0
    text = capsys.readouterr().out
    for name in REQUIRED_BOARDS:
        assert name in text
    row = next(line for line in text.splitlines() if " stm32f746 " in line)
    assert "cortex-m7" in row and "1M" in row and "stlink" in row
    # Every size in the same form: the ESP32-C3's flash windows (1 MiB less a 32-byte header)
    # are 1.0M, not 1024.0K beside the 1M of other boards.
    row = next(line for line in text.splitlines() if " esp32c3-devkitm " in line)
    assert [cell.strip() for cell in row.split("│")][3:5] == ["1.0M", "256K"]
    assert not re.search(r"\b1024(\.\d)?[KM]\b", text)


def test_format_size_is_whole_units_or_one_decimal_in_the_unit_reached():
    assert [format_size(n) for n in (100, 1000, 1500, 4096, 0xFFFE0, 1 << 20, 1023 * 1024 + 512,
                                     1056 * 1024, 5 * 1048576 + 300000)] == \
        ["100 B", "1000 B", "1.5K", "4K", "1.0M", "1M", "1023.5K", "1056K", "5.3M"]


def test_cli_new_writes_a_valid_board_on_the_search_path(tmp_path, capsys):
    assert main(["boards", "new", "my-f746", "--from", "stm32f746"]) == 0
    path = tmp_path / "boards" / "my-f746.yaml"
    assert api.validate_board_files([path]) == []
    board = load_board("my-f746")
    assert board.core == "cortex-m7" and board.name == "my-f746"
    assert main(["boards", "new", "my-f746", "--from", "stm32f746"]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["boards", "new", "Bad Name", "--from", "host"]) == 1
