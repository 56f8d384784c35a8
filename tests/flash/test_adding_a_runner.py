"""docs/adding-a-runner.md, walked through: the toy runner and the board entry are taken from the
page as written, registered, checked with the board file, and flashed with through a stand-in
`toy-flash` script (no real tool, no build)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from microbuild import api
from microbuild.boards import load_board_file
from microbuild.boards.runner_declarations import undeclare
from microbuild.device.debug import debug_session
from microbuild.device.runners import RUNNERS, Capability, FlashError, Runner, install_hint
from microbuild.errors import DeviceError
from microbuild.project.run_and_flash import flash_package

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "boards"))

from board_support import MINIMAL_BOARD  # noqa: E402

DOC = (REPO / "docs" / "adding-a-runner.md").read_text()

# A minimal board; the doc's `flash:` block is appended (the first entry's args on line 22).
BOARD = MINIMAL_BOARD


def _block(language: str) -> str:
    (block, *_) = re.findall(rf"```{language}\n(.*?)```", DOC, re.DOTALL)
    return block


@pytest.fixture(scope="module")
def toy_runner(tmp_path_factory):
    """The doc's module, imported from a temporary folder; unregistered afterwards."""
    path = tmp_path_factory.mktemp("toy") / "toy_runner_from_doc.py"
    path.write_text(_block("python"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    yield module.ToyRunner
    RUNNERS.pop("toy", None)
    undeclare("toy")  # board files may no longer name it either
    sys.modules.pop(path.stem, None)


@pytest.fixture
def board_file(tmp_path, toy_runner):
    def write(flash_yaml: str | None = None) -> Path:
        path = tmp_path / "boards" / "myboard.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(BOARD + (flash_yaml if flash_yaml is not None else _block("yaml")))
        return path
    return write


@pytest.fixture
def firmware(tmp_path) -> Path:
    """Stand-ins for a build's .elf and .bin (the toy tool only names the .bin)."""
    elf = tmp_path / "fw" / "firmware.elf"
    elf.parent.mkdir()
    elf.write_bytes(b"\x7fELF stand-in")
    elf.with_suffix(".bin").write_bytes(b"\x00" * 16)
    return elf


@pytest.fixture
def toy_flash(tmp_path, monkeypatch) -> Path:
    """`toy-flash` on PATH: records its arguments, prints what a flasher prints."""
    folder = tmp_path / "bin"
    folder.mkdir()
    tool = folder / "toy-flash"
    tool.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "argv.txt"}\necho "programmed"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "argv.txt"


def test_the_doc_runner_registers_itself_with_what_it_declares(toy_runner):
    assert RUNNERS["toy"] is toy_runner
    assert toy_runner.capabilities == frozenset({Capability.FLASH})
    assert list(toy_runner.all_arguments()) == ["program", "slot"]  # program: from FlashToolRunner
    assert install_hint("toy") == "install toy's tool: sudo apt-get install toy-flasher"
    # A generated project's README asks for the package the class declares.
    assert flash_package("toy") == "toy-flasher" and flash_package("openocd") == "openocd"
    assert flash_package("pyocd") is None  # on PyPI, not in Debian


def test_flashing_with_the_doc_runner_runs_its_tool_with_the_board_args(board_file, firmware,
                                                                        toy_flash):
    board = load_board_file(board_file())
    assert board.default_runner == "toy"
    assert api.flash_firmware(board, firmware) == "toy"
    assert toy_flash.read_text().split() == ["--slot", "2",
                                             str(firmware.with_suffix(".bin").resolve())]


def test_a_mistyped_or_misspelt_arg_is_a_board_error_with_file_line_and_key_path(board_file):
    wrong_type = board_file(_block("yaml").replace("slot: 2", "slot: two"))
    (problem,) = map(str, api.validate_board_files([wrong_type]))
    assert problem.endswith("myboard.yaml:22: flash[0].args.slot: runner toy: `slot` takes an "
                            "integer, not the string 'two' (the flash slot the image goes to)")
    misspelt = board_file(_block("yaml").replace("slot: 2", "slott: 2"))
    (problem,) = map(str, api.validate_board_files([misspelt]))
    assert ("myboard.yaml:22: flash[0].args.slott: runner toy has no arg `slott` (did you mean "
            "slot?); its args: program, slot") in problem


def test_a_capability_the_runner_lacks_names_the_runners_that_have_it(board_file, firmware):
    board = load_board_file(board_file())
    with pytest.raises(DeviceError) as info:
        debug_session(board, firmware, runner="toy", port=3333)
    assert str(info.value).startswith("runner 'toy' cannot start a GDB server (it declares: "
                                      "flash); use one of the board's runners that can: openocd")


def test_a_missing_tool_is_reported_with_the_declared_package(board_file, firmware, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    board = load_board_file(board_file())
    with pytest.raises(FlashError) as info:
        api.flash_firmware(board, firmware)
    message = str(info.value)
    assert "its tool toy-flash is not installed" in message
    assert "sudo apt-get install toy-flasher" in message


def test_a_declared_capability_needs_its_method_and_a_name_is_taken_once(toy_runner):
    with pytest.raises(TypeError, match="declares gdb-server but does not define "
                                        "gdb_server_command"):
        type("NoServer", (Runner,), {"name": "", "capabilities": frozenset(
            {Capability.GDB_SERVER})})
    with pytest.raises(TypeError, match="runner name 'toy' is taken"):
        type("AnotherToy", (toy_runner,), {"name": "toy"})
    assert RUNNERS["toy"] is toy_runner
