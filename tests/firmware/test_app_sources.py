"""Your own application in a firmware: C and C++ sources built with the board's compilers
(build_firmware(sources=...), i.e. MicroFirmware), executor 'app' (your main, no harness), C++
global constructors run by each board's start-up code before main, and the model's outputs
read by your code equal TFLM's."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import load_board
from microbuild.device.runners import runner_for
from microbuild.errors import MicrobuildError, ToolchainError
from microbuild.firmware.build import build_firmware
from microbuild.firmware.linker_script import linker_script
from microbuild.firmware.toolchains import toolchain_setup

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "models" / "tiny_fc.tflite"
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm  # noqa: E402

# Fills the model's input with a pattern the test recomputes, runs it, and prints the flag a C++
# constructor set (before main) and the output bytes in hex.
APP_C = r"""
#include "microbuild/platform.h"
#include "tiny_fc.h"
#include "shapes.h"

extern int constructed_value;   /* flag.cpp: set by a global object's constructor */
int helper_twice(int x);        /* helper.cc: an extern "C" function in C++ */

static uint8_t workspace[TINY_FC_WORKSPACE_SIZE]
    __attribute__((aligned(TINY_FC_WORKSPACE_ALIGN), section(".bss.mb_workspace.app")));

int main(void)
{
    mb_console_init();
    int8_t *in = tiny_fc_input0(workspace);
    for (int i = 0; i < TINY_FC_INPUT0_SIZE; i++) {
        in[i] = (int8_t)(PATTERN(i));
    }
    int status = tiny_fc_run(in, tiny_fc_output0(workspace), workspace);
    mb_print("constructed ");
    mb_print_i32(constructed_value);
    mb_print("\ntwice ");
    mb_print_i32(helper_twice(21));
    mb_print("\noutput ");
    mb_print_hex(tiny_fc_output0(workspace), TINY_FC_OUTPUT0_BYTES);
    mb_print("\n");
    return status;
}
"""

FLAG_CPP = r"""
#include "microbuild/platform.h"   // the runtime's headers are C++-clean (extern "C")
#include "tiny_fc.h"               // ... and so is the generated model header

extern "C" int constructed_value;
int constructed_value = 0;

namespace {
class Sets {
public:
    explicit Sets(int value) : value_(value) { constructed_value = value_; }
    ~Sets() { constructed_value = -1; }   // never runs: main's return goes to mb_exit
    virtual int get() const { return value_; }
private:
    int value_;
};
Sets sets(TINY_FC_NUM_OUTPUTS * 1000 + 42);
}
"""

HELPER_CC = r"""
extern "C" int helper_twice(int x);
template <typename T> static T twice(T x) { return x + x; }
int helper_twice(int x) { return twice(x); }
"""


def pattern(i):
    return (i * 37 + 11) % 256 - 128


@pytest.fixture
def app(tmp_path):
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    include = tmp_path / "include"
    include.mkdir()
    (include / "shapes.h").write_text("#define PATTERN(i) (((i) * 37 + 11) % 256 - 128)\n")
    (src / "app.c").write_text(APP_C)
    (src / "flag.cpp").write_text(FLAG_CPP)
    (src / "lib" / "helper.cc").write_text(HELPER_CC)
    return tmp_path


def _expected_output() -> np.ndarray:
    from microbuild.compiler import compile_model

    (spec,) = compile_model(TINY, prefix="tiny_fc").inputs
    x = np.array([pattern(i) for i in range(int(np.prod(spec.shape)))],
                 dtype=np.int8).reshape(spec.shape)
    (y,) = run_tflm(TINY, [x])
    return y.reshape(-1)


@pytest.mark.parametrize("board,toolchain", [
    ("host", None), ("host-clang", None), ("mps2-an500", None), ("mps2-an385", "clang"),
    ("riscv32-virt", None), ("atmega328p", None)])
def test_c_and_cpp_sources_run_with_constructors_before_main(app, board, toolchain):
    runner = runner_for(load_board(board))
    build = build_firmware(board, [TINY], app / "build", executor="app", toolchain=toolchain,
                           sources=[app / "src" / "app.c", app / "src" / "flag.cpp",
                                    app / "src" / "lib" / "helper.cc"],
                           include_dirs=[app / "include"])
    assert build.input_file is None and build.executor == "app"
    run = runner.run_to_exit(build.elf, timeout=120)
    assert run.status == 0, run.console + run.stderr
    assert "constructed 1042\n" in run.console  # the C++ global's constructor ran before main
    assert "twice 42\n" in run.console
    (hex_bytes,) = re.findall(r"output ([0-9a-f]+)", run.console)
    got = np.frombuffer(bytes.fromhex(hex_bytes), dtype=np.int8)
    np.testing.assert_array_equal(got, _expected_output())
    # No harness: your main is the only one, and the objects keep your folders' layout.
    objects = build.out_dir / "firmware.src" / "app"
    assert (objects / "lib" / "helper.o").is_file() and (objects / "flag.o").is_file()
    assert not (build.out_dir / "firmware.src" / "mb_aot_models.c").exists()


def test_sources_beside_the_aot_harness(app):
    """With executor aot your sources are linked next to microbuild's main (a library of yours,
    say): the harness runs and the C++ constructor ran too."""
    (app / "src" / "app.c").unlink()
    build = build_firmware("host", [TINY], app / "build", executor="aot",
                           sources=[app / "src" / "flag.cpp"])
    run = runner_for(build.board).run_to_exit(build.elf)
    assert run.status == 0 and "mb-aot status tiny_fc 0" in run.console


def test_mcu_cpp_flags_and_the_linker_script_keeps_constructor_tables():
    setup = toolchain_setup(load_board("mps2-an500"))
    assert {"-fno-exceptions", "-fno-rtti"} <= set(setup.cxxflags)
    scons = setup.as_scons()
    assert "-std=c99" in scons["CFLAGS"] and "-std=c99" not in scons["CCFLAGS"]
    assert scons["CXX"].endswith("arm-none-eabi-g++")
    assert toolchain_setup(load_board("host")).cxxflags == ["-std=c++17"]
    script = linker_script(load_board("mps2-an500"))
    assert "KEEP(*(.init_array))" in script and "KEEP(*(.preinit_array))" in script
    for symbol in ("__init_array_start", "__init_array_end", "__preinit_array_start",
                   "__preinit_array_end"):
        assert f"{symbol} = .;" in script


def test_missing_cpp_compiler_names_the_package(app):
    setup = toolchain_setup(load_board("mps2-an500"))
    setup.cxx = "arm-none-eabi-g++-not-installed"
    with pytest.raises(ToolchainError, match="sudo apt-get install gcc-arm-none-eabi"):
        setup.require_cxx()


@pytest.mark.parametrize("kwargs,message", [
    ({"executor": "app"}, "executor 'app' runs your own main"),
    ({"executor": "app", "sources": ["nothere.c"]}, "source nothere.c: no such file"),
    ({"executor": "aot", "include_dirs": ["nothere"]}, "include folder nothere: no such folder"),
])
def test_source_mistakes_are_clear_errors(app, kwargs, message):
    with pytest.raises(MicrobuildError, match=message):
        build_firmware("host", [TINY], app / "build", **kwargs)


def test_a_rust_file_is_refused_by_the_scons_tool(app):
    (app / "src" / "main.rs").write_text("fn main() {}\n")
    with pytest.raises(MicrobuildError, match=r"main\.rs: not a C, C\+\+ or assembly file"):
        build_firmware("host", [TINY], app / "build", executor="app",
                       sources=[app / "src" / "main.rs"])


@pytest.mark.skipif(shutil.which("arm-none-eabi-g++") is None, reason="no arm-none-eabi-g++")
def test_cpp_warnings_are_the_boards_c_warnings(app):
    """C++ sources get the board's -Wall -Wextra (CCFLAGS) too: an unused parameter warns."""
    (app / "src" / "warn.cpp").write_text("extern \"C\" int f(int unused) { return 1; }\n")
    build = build_firmware("mps2-an500", [TINY], app / "build", executor="app",
                           sources=[app / "src" / "app.c", app / "src" / "flag.cpp",
                                    app / "src" / "lib" / "helper.cc", app / "src" / "warn.cpp"],
                           include_dirs=[app / "include"])
    assert "unused parameter 'unused'" in build.log
