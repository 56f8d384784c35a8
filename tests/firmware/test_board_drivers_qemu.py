"""Boards that bring their own drivers, end to end in QEMU.

- lm3s6965evb: a built-in board for a real MCU (TI Stellaris LM3S6965, as QEMU models it) whose
  console driver is a C file in the board's folder, not one of runtime/drivers/. DS-CNN runs on
  it bit-exact with TFLM.
- A user's board folder: a YAML extending a built-in board with its own console driver (and a
  header beside it) and its own init code, built and run in QEMU, and as a generated project.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.firmware import board_files
from microbuild.paths import board_defs_dir, runtime_dir

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
TINY_FC = MODELS / "tiny_fc.tflite"


def _defined_in(map_file: Path, symbol: str) -> str:
    """The object file the linker took ``symbol``'s code from, per the link map."""
    text = map_file.read_text()
    match = re.search(rf"^ \.text\.{symbol}\s*\n?\s*0x[0-9a-f]+\s+0x[0-9a-f]+\s+(\S+)$", text,
                      re.MULTILINE)
    assert match, f"{symbol} not in {map_file}"
    return match.group(1)


def _assert_bit_exact(build, model: Path) -> None:
    result = api.run_firmware(build, timeout=120)
    prefix = build.models[0]["prefix"]
    expected = run_tflm(model, build.inputs(prefix))
    assert len(result.outputs[prefix]) == len(expected)
    for got, want in zip(result.outputs[prefix], expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{build.board}: {model.name}")
    return result


# --- lm3s6965evb -------------------------------------------------------------------------------

def test_lm3s6965evb_names_its_console_driver_by_file():
    board = load_board("lm3s6965evb")
    driver = board_defs_dir() / "lm3s6965evb" / "pl011_console.c"
    assert board.local_sources == {"console": driver.resolve()}
    assert board.transport["driver"] == "lm3s6965evb/pl011_console.c"
    # The datasheet's memory map and UART0.
    assert (board.regions["flash"].origin, board.regions["flash"].length) == (0, 256 * 1024)
    assert (board.regions["sram"].origin, board.regions["sram"].length) == (0x20000000, 64 * 1024)
    assert board.transport["base"] == 0x4000C000
    assert board.qemu["machine"] == "lm3s6965evb" and board.qemu["args"] == ["-icount", "shift=0"]
    # Only the timer and exit drivers come from runtime/drivers/.
    assert board_files.driver_sources(board) == ["drivers/timer/systick.c",
                                                 "drivers/exit/semihosting.c", "support/print.c"]


@pytest.mark.parametrize("compiler", ["arm-none-eabi-gcc", "clang"])
def test_lm3s6965evb_console_driver_compiles_warning_free(compiler, tmp_path):
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed: ./setup.sh installs it")
    board = load_board("lm3s6965evb")
    (tmp_path / "mb_board_config.h").write_text(board_files.board_config_h(board))
    target = ["-mcpu=cortex-m3", "-mthumb"] + (["--target=thumbv7m-none-eabi"]
                                               if compiler == "clang" else [])
    subprocess.run([compiler, *target, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-O2", "-ffreestanding", "-I", str(tmp_path), "-I",
                    str(runtime_dir() / "include"), "-c", str(board.local_sources["console"]),
                    "-o", str(tmp_path / "console.o")], check=True)
    assert (tmp_path / "console.o").stat().st_size > 0


def test_ds_cnn_runs_bit_exact_on_lm3s6965evb(tmp_path):
    build = api.build_firmware("lm3s6965evb", [DS_CNN], tmp_path, name="ds_cnn")
    assert build.size["fits"]
    regions = {r["name"]: r for r in build.size["regions"]}
    # DS-CNN fits the chip's 64 KiB of SRAM (workspace + stack) and 256 KiB of flash.
    assert regions["sram"]["used"] <= 64 * 1024 and regions["flash"]["used"] <= 256 * 1024
    # The console code linked is the board's own file's.
    assert _defined_in(build.elf.with_suffix(".map"), "mb_console_init").endswith(
        "(console_pl011_console.o)")
    result = _assert_bit_exact(build, DS_CNN)
    assert result.timer_hz == 12_500_000
    # Under -icount shift=0 the SysTick count is exact: a second run gives the same ticks.
    again = api.run_firmware(build, timeout=120)
    assert abs(again.ticks["ds_cnn"] - result.ticks["ds_cnn"]) <= 1 and result.ticks["ds_cnn"] > 0


def test_ds_cnn_on_lm3s6965evb_with_clang_and_picolibc(tmp_path):
    build = api.build_firmware("lm3s6965evb", [DS_CNN], tmp_path, name="ds_cnn",
                               toolchain="clang", seed=3)
    _assert_bit_exact(build, DS_CNN)


# --- a user's board folder ------------------------------------------------------------------------

USER_BOARD = """
# My board: QEMU's MPS2 AN385 with my own console driver and init code.
name: my-an385
extends: mps2-an385
title: AN385 with my drivers
init: null                         # the inherited snippet goes: init_source replaces it
init_source: board_init.c
transport:
  driver: drivers/my_uart.c
"""

# A CMSDK APB UART driver of the user's own: register map in a header beside it, a banner on
# init that proves it is the one linked, and a word the init code set before main.
USER_UART_REGS_H = """
#ifndef MY_UART_REGS_H
#define MY_UART_REGS_H
#include <stdint.h>
#define MY_UART_DATA  (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + 0x00u))
#define MY_UART_STATE (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + 0x04u))
#define MY_UART_CTRL  (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + 0x08u))
#define MY_UART_DIV   (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + 0x10u))
#endif
"""

USER_UART_C = """
#include "mb_board_config.h"
#include "microbuild/platform.h"
#include "my_uart_regs.h"

extern volatile uint32_t my_board_init_word;

static void put(uint8_t byte)
{
    while (MY_UART_STATE & 1u) {
    }
    MY_UART_DATA = byte;
}

void mb_console_init(void)
{
    static const char banner[] = "my-uart: init word ";
    MY_UART_CTRL = 0u;
    MY_UART_DIV = 16u;
    MY_UART_CTRL = 3u; /* TX and RX */
    mb_console_write(banner, sizeof banner - 1u);
    mb_print_hex((const void *)&my_board_init_word, sizeof my_board_init_word);
    put('\\n');
}

void mb_console_write(const void *data, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        put(((const uint8_t *)data)[i]);
    }
}

int mb_console_try_read(void)
{
    return (MY_UART_STATE & 2u) ? (int)(MY_UART_DATA & 0xFFu) : -1;
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
"""

USER_INIT_C = """
#include <stdint.h>
#include "microbuild/platform.h"

volatile uint32_t my_board_init_word;

void mb_board_init(void)
{
    my_board_init_word = 0xC0FFEE42u;
}
"""


def _user_board(folder: Path) -> Path:
    (folder / "drivers").mkdir(parents=True)
    (folder / "drivers" / "my_uart.c").write_text(textwrap.dedent(USER_UART_C).lstrip())
    (folder / "drivers" / "my_uart_regs.h").write_text(textwrap.dedent(USER_UART_REGS_H).lstrip())
    (folder / "board_init.c").write_text(textwrap.dedent(USER_INIT_C).lstrip())
    path = folder / "my-an385.yaml"
    path.write_text(textwrap.dedent(USER_BOARD).lstrip())
    return path


def test_a_user_board_folder_brings_its_own_console_driver(tmp_path, monkeypatch):
    folder = tmp_path / "myboards"
    _user_board(folder)
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", str(folder))
    monkeypatch.chdir(tmp_path)
    board = load_board("my-an385")
    assert board.local_sources == {"console": (folder / "drivers" / "my_uart.c").resolve(),
                                   "init": (folder / "board_init.c").resolve()}
    assert "init" not in board.data
    build = api.build_firmware("my-an385", [TINY_FC], tmp_path / "out", name="tiny_fc")
    result = _assert_bit_exact(build, TINY_FC)
    # The init code ran before main, and the console is the user's driver (its banner, in
    # memory order of the little-endian word).
    assert "my-uart: init word 42eeffc0\n" in result.console
    assert _defined_in(build.elf.with_suffix(".map"), "mb_board_init").endswith(
        "(init_board_init.o)")


def test_a_generated_project_carries_the_board_s_own_files(tmp_path, monkeypatch):
    """A make project for the user's board copies its driver, header and init code beside the
    board YAML (board/src/...), builds with make as an unprivileged user in a folder that user
    owns, and runs in QEMU."""
    from microbuild.cli import main

    folder = tmp_path / "myboards"
    _user_board(folder)
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", str(folder))
    monkeypatch.chdir(tmp_path)
    home = Path(tempfile.mkdtemp(prefix="mb-user-", dir="/tmp"))
    try:
        project = home / "project"
        assert main(["generate", "--board", "my-an385", "--model", str(TINY_FC), "--format",
                     "make", "-o", str(project)]) == 0
        assert (project / "board" / "src" / "drivers" / "my_uart.c").read_text() == \
            (folder / "drivers" / "my_uart.c").read_text()
        assert (project / "board" / "src" / "drivers" / "my_uart_regs.h").is_file()
        assert (project / "board" / "src" / "board_init.c").is_file()
        yaml_text = (project / "board" / "my-an385.yaml").read_text()
        assert "driver: src/drivers/my_uart.c" in yaml_text
        assert "init_source: src/board_init.c" in yaml_text
        # The project's board file is complete by itself: it validates where it is.
        monkeypatch.delenv("MICROBUILD_BOARDS_PATH")
        assert load_board(str(project / "board" / "my-an385.yaml")).local_sources["console"] \
            == (project / "board" / "src" / "drivers" / "my_uart.c").resolve()
        command: list[str] = []
        if os.geteuid() == 0:  # build as a user who is not root, as users do
            os.chmod(home, 0o755)
            subprocess.run(["chown", "-R", "nobody:nogroup", str(home)], check=True)
            command = ["runuser", "-u", "nobody", "--"]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "LANG": "C.UTF-8"}
        # SELF_TEST=1: the generated src/main.c runs microbuild's self-test (the outputs
        # records) instead of the application skeleton.
        built = subprocess.run(command + ["make", "-j2", "SELF_TEST=1"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        run = subprocess.run(command + ["make", "run", "SELF_TEST=1"], cwd=project, env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert "my-uart: init word 42eeffc0" in run.stdout
        assert "mb-aot status tiny_fc 0" in run.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)
