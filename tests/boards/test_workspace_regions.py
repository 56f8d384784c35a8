"""placement.workspace as a list of regions in order of preference: validated like any placement
(file:line, did-you-mean), read by the rest of microbuild as its first region, the whole list in
Board.workspace_regions."""

from __future__ import annotations

import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.firmware.linker_script import linker_script
from microbuild.firmware.workspaces import DATA_RESERVE, split_regions

from test_boards import GOOD, problems_of, write


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def test_a_list_of_regions_is_valid_and_its_first_is_the_workspace_placement(tmp_path):
    text = GOOD.replace("ram: {origin: 0x20000000, length: 64K, access: rwx}",
                        "ram: {origin: 0x20000000, length: 64K, access: rwx}\n"
                        "    sram2: {origin: 0x30000000, length: 128K, access: rw}")
    text = text.replace("workspace: ram", "workspace: [ram, sram2]")
    assert problems_of(tmp_path, text) == []
    board = api.load_board_file(tmp_path / "defs" / "myboard.yaml")
    assert board.workspace_regions == ["ram", "sram2"]
    assert board.placement["workspace"] == "ram"
    assert board.placement["state"] == "ram"  # the state follows the first region
    # The compiler's budgets: ram holds the stack (4K default) and .data/.bss; sram2 nothing else.
    ram, sram2 = split_regions(board)
    assert (ram.name, ram.free, ram.holds_state) == ("ram", 64 * 1024 - 4096 - DATA_RESERVE, True)
    assert (sram2.name, sram2.free, sram2.holds_state) == ("sram2", 128 * 1024, False)
    assert ram.counted == "64K minus 4K stack, 1K kept for .data/.bss"


def test_a_misspelt_region_in_the_list_names_its_line_and_the_close_name(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("workspace: ram", "workspace: [ram, rma2]")
                             .replace("ram: {origin: 0x20000000, length: 64K, access: rwx}",
                                      "ram: {origin: 0x20000000, length: 64K, access: rwx}\n"
                                      "    ram2: {origin: 0x30000000, length: 64K, access: rwx}"))
    assert problem.endswith("myboard.yaml:14: memory.placement.workspace[1]: workspace is placed "
                            "in 'rma2', which is not a region here (did you mean ram2 or ram?); "
                            "regions: flash, ram, ram2")


def test_a_read_only_region_in_the_list_is_refused(tmp_path):
    (problem,) = problems_of(tmp_path, GOOD.replace("workspace: ram", "workspace: [ram, flash]"))
    assert problem.endswith("memory.placement.workspace[1]: workspace is written at run time but "
                            "region 'flash' is rx (not writable); place it in a rw/rwx region")


@pytest.mark.parametrize("value", ["[]", "[ram, ram]", "5"])
def test_an_empty_repeating_or_non_name_workspace_says_what_is_allowed(tmp_path, value):
    (problem,) = problems_of(tmp_path, GOOD.replace("workspace: ram", f"workspace: {value}"))
    assert "myboard.yaml:13: memory.placement.workspace: " in problem
    assert problem.endswith("name one region (workspace: dtcm) or list different regions in "
                            "order of preference (workspace: [dtcm, axi_sram])")


def test_a_one_region_list_is_the_single_name_form(tmp_path):
    """Nothing to split across: same budgets (none), same linker script as `workspace: sram`."""
    path = write(tmp_path / "boards" / "one-list.yaml", """
        name: one-list
        extends: mps2-an500
        memory:
          placement:
            workspace: [sram]
        """)
    board = load_board(str(path))
    assert split_regions(board) is None
    plain = load_board("mps2-an500")
    strip = lambda text: "\n".join(text.splitlines()[2:])  # noqa: E731 (the header names the file)
    assert strip(linker_script(board)) == strip(linker_script(plain))


def test_the_linker_script_places_each_further_region_s_parts_there(tmp_path):
    path = write(tmp_path / "boards" / "h7-split.yaml", """
        name: h7-split
        extends: nucleo-h743zi
        memory:
          placement:
            workspace: [dtcm, axi_sram, sram1]
        """)
    script = linker_script(load_board(str(path)))
    for region in ("axi_sram", "sram1"):
        section = (f"    .mb_workspace_{region} (NOLOAD) : ALIGN(16)\n    {{\n"
                   f"        *(.bss.mb_workspace_{region} .bss.mb_workspace_{region}.*)\n"
                   f"    }} > {region}\n")
        assert section in script
        # Before .bss, whose .bss.* pattern would otherwise take the parts.
        assert script.index(section) < script.index("    .bss (NOLOAD)")
    assert "*(.bss.mb_workspace .bss.mb_workspace.*)\n    } > dtcm" in script
