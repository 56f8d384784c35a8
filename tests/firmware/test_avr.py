"""The atmega328p board (Arduino Uno class, avr-gcc + avr-libc): 32 KiB of flash and 2 KiB of RAM,
in which the weights live too. tiny_fc builds, fits and runs bit-exact with TFLM in simavr; every
other test model is a fit error naming the RAM region. The runtime compiles warning-free with
avr-gcc, whose `int` is 16 bits: the fixed-point helpers must not shift a plain `1` into bit 30."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from microbuild import api
from microbuild.boards import load_board, load_board_file
from microbuild.firmware import board_files, linker_script, toolchains
from microbuild.compiler import quant
from microbuild.device.runners.simavr import uart_text
from microbuild.errors import BoardError, FitError, ToolchainError
from microbuild.paths import runtime_dir

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
TINY = MODELS_DIR / "tiny_fc.tflite"
# The MLPerf-Tiny-like models need far more than 2 KiB of RAM (the small user-made models in
# tests/models may fit, so they are not listed).
TOO_BIG = [MODELS_DIR / f"{name}.tflite" for name in ("anomaly_ae", "ds_cnn",
                                                       "mobilenet_v1_025_vww", "resnet8")]
RUNTIME = runtime_dir()
AVR_GCC = shutil.which("avr-gcc")
needs_avr = pytest.mark.skipif(AVR_GCC is None, reason="avr-gcc is not installed")
needs_simavr = pytest.mark.skipif(shutil.which("simavr") is None, reason="simavr is not installed")

AVR_FLAGS = ["-mmcu=atmega328p", "-Os", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    """One folder for every build here: the board's runtime library is compiled once."""
    return tmp_path_factory.mktemp("avr")


def _avr_compile(sources: list[Path], cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([AVR_GCC, *AVR_FLAGS, *extra, f"-I{cwd}", f"-I{RUNTIME / 'include'}",
                           *map(str, sources)], cwd=cwd, capture_output=True, text=True,
                          check=False)


# --- the toolchain and the board ------------------------------------------------------------------

@needs_avr
def test_avr_gcc_setup_keeps_the_default_script_and_puts_weights_in_data():
    board = load_board("atmega328p")
    setup = toolchains.toolchain_setup(board)
    assert setup.family == "avr-gcc" and setup.cc.endswith("avr-gcc")
    assert "-mmcu=atmega328p" in setup.cflags and "-mmcu=atmega328p" in setup.linkflags
    assert not setup.uses_linker_script and setup.insert_after == ".noinit"
    assert setup.startup == ["startup/avr.c"]  # the .init8/.fini8 hooks, not a reset handler
    assert "MB_WEIGHTS_ATTR=" in setup.cppdefines  # weights in .rodata -> .data (RAM)
    assert setup.max_object_bytes == 32767
    script = linker_script.default_script_additions(board, setup.insert_after)
    assert script.rstrip().endswith("INSERT AFTER .noinit;")
    assert "*(.bss.mb_workspace .bss.mb_workspace.*)" in script
    assert f". += {board.stack_size:#x};" in script


def test_missing_avr_gcc_names_the_debian_packages(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    with pytest.raises(ToolchainError, match=r"sudo apt-get install gcc-avr avr-libc"):
        toolchains.toolchain_setup(load_board("atmega328p"))


@needs_avr
def test_weights_placed_in_flash_are_refused(tmp_path):
    text = (Path(load_board("atmega328p").files[0]).read_text()
            .replace("weights: ram", "weights: flash"))
    path = tmp_path / "boards" / "atmega328p.yaml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(BoardError, match=r"placement\.weights is 'flash'.*RAM"):
        toolchains.toolchain_setup(load_board_file(path))


# --- building ------------------------------------------------------------------------------------

@needs_avr
def test_tiny_fc_builds_and_fits(out_dir):
    build = api.build_firmware("atmega328p", [TINY], out_dir, name="tiny_fc")
    size = build.size
    assert size["fits"], size
    regions = {r["name"]: r for r in size["regions"]}
    ram, flash = regions["ram"], regions["flash"]
    assert ram["origin"] == 0x800100 and ram["length"] == 2048
    assert ram["used"] <= 2048 and flash["used"] <= 32 * 1024
    in_ram = {c["section"]: c["bytes"] for c in ram["contributions"] if c["role"] == "run"}
    assert in_ram[".stack"] == 512 and in_ram[".mb_workspace"] >= build.models[0]["workspace_bytes"]
    # The weights are ordinary constants on AVR: in .data, copied from flash to RAM at boot.
    assert in_ram[".data"] >= build.models[0]["weights_bytes"]
    assert any(c["section"] == ".data" and c["role"] == "load" for c in flash["contributions"])
    # (the weights array: the model's own, or the one a kernel variant pre-arranged)
    assert any(s["name"].startswith("tiny_fc_") and s["section"] == ".data"
               for s in ram["symbols"])
    assert size["weights_bytes"] == 0 and size["totals"]["data"] >= build.models[0]["weights_bytes"]

    assert build.hex.read_text().startswith(":") and build.binary.is_file()
    # Only flash contents in the images: no record above 32 KiB (.data's RAM address, 0x800100,
    # would need an extended-address record).
    for line in build.hex.read_text().split():
        assert line[7:9] in ("00", "01"), line
        assert int(line[3:7], 16) + int(line[1:3], 16) <= 32 * 1024
    assert build.binary.stat().st_size == flash["used"]

    with open(build.elf, "rb") as f:
        elf = ELFFile(f)
        assert elf["e_machine"] == "EM_AVR"
        names = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()}
    # mb_board_init runs from .init8 (before main), main's return goes to mb_exit from .fini8.
    assert {"mb_avr_init8", "mb_avr_fini8", "mb_board_init", "mb_exit", "__vector_13"} <= set(names)
    assert (out_dir / "tiny_fc.map").is_file()


@needs_avr
@pytest.mark.parametrize("model", TOO_BIG, ids=[p.stem for p in TOO_BIG])
def test_bigger_models_are_a_fit_error_for_ram(model, out_dir):
    with pytest.raises(FitError) as info:
        api.build_firmware("atmega328p", [model], out_dir, name=model.stem)
    message = str(info.value)
    first = message.splitlines()[0]
    assert first.startswith("The firmware does not fit on board atmega328p:")
    assert re.search(r"region ram overflows by (at least )?[\d,]+ bytes", first), first
    assert "\n  ram: 2,048 bytes (2.0 KiB) at 0x00800100." in message
    if model.stem == "ds_cnn":
        # Every array compiles: the linked ELF is analysed, and it names what fills the RAM.
        assert "before compiling" not in message
        assert ".mb_workspace (model workspace)" in message
        assert ".data (initialised data)" in message
        assert "ds_cnn_t" in message and "mb_aot_workspace_ds_cnn" in message
    else:
        # An array over avr-gcc's 32767-byte object limit would not compile: the fit error is
        # counted from the model, before compiling.
        assert "before compiling" in message and "32,767 bytes" in message
        assert f"{model.stem} weights (model weights)" in message


@needs_avr
@needs_simavr
def test_tiny_fc_runs_bit_exact_in_simavr(out_dir):
    for seed in (0, 3):
        build = api.build_firmware("atmega328p", [TINY], out_dir, name=f"tiny_fc_run{seed}",
                                   seed=seed)
        result = api.run_firmware(build, timeout=60)
        expected = run_tflm(TINY, build.inputs("tiny_fc"))
        for got, want in zip(result.outputs["tiny_fc"], expected, strict=True):
            np.testing.assert_array_equal(got, want)
        assert result.timer_hz == 16_000_000
        # Timer1 counts CPU cycles in simavr: a few hundred thousand for two small layers.
        assert 10_000 < result.ticks["tiny_fc"] < 2_000_000


def test_simavr_uart_log_is_turned_back_into_text():
    long = "a" * 300
    log = "".join(f"\x1b[32m{piece}\n\x1b[0m" for piece in
                  ["mb-aot begin x 1 1.", long[:256], long[256:] + ".", ".", "end."])
    text, rest = uart_text(log + "simavr: sleeping with interrupts off, quitting gracefully\n")
    assert text == f"mb-aot begin x 1 1\n{long}\n\nend\n"
    assert rest.startswith("simavr: sleeping")


# --- the runtime with 16-bit int -----------------------------------------------------------------

AVR_SOURCES = (sorted(str(p.relative_to(RUNTIME)) for p in (RUNTIME / "kernels").glob("*.c"))
               + ["support/print.c", "aot/main.c", "aot/self_test.c", "startup/avr.c",
                  "startup/cxx_abi.c", "drivers/console/avr_usart.c",
                  "drivers/timer/avr_timer1.c", "drivers/exit/halt.c"])


@needs_avr
def test_runtime_compiles_warning_free_with_avr_gcc(tmp_path):
    config = board_files.board_config_h(load_board("atmega328p"))
    (tmp_path / "mb_board_config.h").write_text(config)
    result = _avr_compile([RUNTIME / s for s in AVR_SOURCES], tmp_path, "-c")
    assert result.returncode == 0, result.stderr
    assert {p.stem for p in tmp_path.glob("*.o")} == {Path(s).stem for s in AVR_SOURCES}


@needs_avr
@pytest.mark.parametrize("change, source, message", [
    ("#define MB_CONSOLE_OPT_U2X 1u", "drivers/console/avr_usart.c",
     "more than 2.5% off at this clock; try transport.options.u2x: true"),
    ("#define MB_TIMER_HZ 0x3d0900u", "drivers/timer/avr_timer1.c",  # 4 MHz: no such prescaler
     "timer.frequency_hz must be cpu.clock_hz / 1, 8, 64, 256 or 1024"),
])
def test_avr_driver_settings_are_checked_at_compile_time(change, source, message, tmp_path):
    config = board_files.board_config_h(load_board("atmega328p"))
    if "U2X" in change:
        config = config.replace("#define MB_CONSOLE_OPT_U2X 1", "#define MB_CONSOLE_OPT_U2X 0")
    else:
        config = re.sub(r"#define MB_TIMER_HZ \S+", change, config)
    (tmp_path / "mb_board_config.h").write_text(config)
    result = _avr_compile([RUNTIME / source], tmp_path, "-c")
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_portable_runtime_never_shifts_a_plain_int_one():
    """`1 << 30` is undefined where int is 16 bits (AVR): write (int32_t)1 << 30."""
    pattern = re.compile(r"(?<![\w)\]])1[uU]?\s*<<")
    offenders = []
    for folder in ("kernels", "include", "support", "aot"):
        for path in sorted((RUNTIME / folder).rglob("*.[ch]")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(RUNTIME)}:{number}: {line.strip()}")
    assert offenders == []


QUANT_PROGRAM = r"""
#include <stdint.h>
#include "mb_board_config.h"
#include "microbuild/kernels/add.h"
#include "microbuild/platform.h"
#include "microbuild/quant.h"

void mb_board_init(void) {}

static const int32_t cases[][3] = { CASES };
static const mb_add_s8_params add = ADD_PARAMS;

int main(void)
{
    mb_console_init();
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mb_print_i32(mb_saturating_rounding_doubling_high_mul(cases[i][0], cases[i][1]));
        mb_print(" ");
        mb_print_i32(mb_mul_by_quantized_multiplier(cases[i][0], cases[i][1], (int)cases[i][2]));
        mb_print(" ");
        mb_print_i32(mb_add_s8_one(&add, (int8_t)cases[i][2], (int8_t)(cases[i][0] & 0x7f)));
        mb_print("\n");
    }
    return 0;
}
"""


@needs_avr
@needs_simavr
def test_fixed_point_helpers_match_python_with_16_bit_int(tmp_path):
    """quant.h and add.h on AVR, where the old `1 << 30` nudge and `1 << left_shift` were 0, against
    microbuild's Python model of TFLM's arithmetic."""
    rng = np.random.default_rng(7)
    cases = [(int(a), int(b), int(s)) for a, b, s in zip(
        rng.integers(-(1 << 31), 1 << 31, 24), rng.integers(1 << 30, 1 << 31, 24),
        rng.integers(-12, 4, 24))]
    cases += [(100, 1 << 30, -1), (-100, 1 << 30, -1), (3, 1518500250, 0),
              (-(1 << 31), 1 << 30, -3)]
    p = {"input1_offset": 3, "input1_multiplier": 1518500250, "input1_shift": -1,
         "input2_offset": -7, "input2_multiplier": 1263155259, "input2_shift": -2,
         "left_shift": 20, "output_multiplier": 1779033704, "output_shift": -19,
         "output_offset": -5, "activation_min": -128, "activation_max": 127}

    def c_int32(v: int) -> str:
        return "(-2147483647 - 1)" if v == -(1 << 31) else f"INT32_C({v})"

    def add_one(a: int, b: int) -> int:
        mq = quant.multiply_by_quantized_multiplier
        x1 = (p["input1_offset"] + a) * (1 << p["left_shift"])
        x2 = (p["input2_offset"] + b) * (1 << p["left_shift"])
        s = mq(x1, p["input1_multiplier"], p["input1_shift"]) + \
            mq(x2, p["input2_multiplier"], p["input2_shift"])
        r = mq(s, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
        return min(max(r, p["activation_min"]), p["activation_max"])

    def s8(v: int) -> int:
        return ((v + 128) & 0xFF) - 128

    rows = ", ".join("{" + ", ".join(map(c_int32, c)) + "}" for c in cases)
    fields = ", ".join(f".{k} = {c_int32(v)}" for k, v in p.items())
    program = QUANT_PROGRAM.replace("CASES", rows).replace("ADD_PARAMS", "{" + fields + "}")
    (tmp_path / "check.c").write_text(program)
    board = load_board("atmega328p")
    (tmp_path / "mb_board_config.h").write_text(board_files.board_config_h(board))
    # The start-up code opens the console and the timer before main, so both drivers are linked.
    sources = [tmp_path / "check.c"] + [RUNTIME / s for s in (
        "startup/avr.c", "drivers/console/avr_usart.c", "drivers/timer/avr_timer1.c",
        "drivers/exit/halt.c", "support/print.c")]
    build = _avr_compile(sources, tmp_path, "-o", "check.elf")
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["simavr", "-m", "atmega328p", "-f", "16000000", "check.elf"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    text, _ = uart_text(run.stderr)
    got = [tuple(int(v) for v in line.split()) for line in text.splitlines()]
    want = [(quant.saturating_rounding_doubling_high_mul(a, b),
             quant.multiply_by_quantized_multiplier(a, b, s),
             add_one(s8(s), s8(a & 0x7F))) for a, b, s in cases]
    assert got == want, [(g, w) for g, w in zip(got, want) if g != w][:3]
