"""The platform runtime (start-up, console/timer/exit drivers, print helpers, the AOT main) compiles
warning-free (-Wall -Wextra -Werror -pedantic, C99) for every architecture it serves, with GCC and
clang; and firmware built from it runs on QEMU: the AOT protocol lines come out of the console
UART, main's return value becomes QEMU's exit status, a fault exits with 128 + its number, and
timer ticks are repeatable under -icount.

The QEMU firmware uses a throwaway linker script written here (the real one is microbuild's
generator's job) that defines exactly the symbols the start-up files need."""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from microbuild.paths import runtime_dir

RUNTIME = runtime_dir()
INCLUDE = RUNTIME / "include"
PICOLIBC_ARM = "/usr/lib/picolibc/arm-none-eabi"
CLANG_RESOURCE = (subprocess.run(["clang", "-print-resource-dir"], capture_output=True,
                                 text=True, check=True).stdout.strip() if shutil.which("clang") else "")
FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-c"]
ASM_FLAGS = ["-Wall", "-Wextra", "-Werror", "-O2", "-c"]

# Every macro any driver reads, so each compiles in full (nothing falls back to #error).
BOARD_CONFIG = """\
#define MB_BOARD_NAME "test-board"
#define MB_CPU_CLOCK_HZ 25000000u
#define MB_TIMER_HZ 25000000u
#define MB_CONSOLE_BASE 0x40004000u
#define MB_CONSOLE_BAUD 115200u
#define MB_CONSOLE_OPT_PCLK_HZ 84000000u
#define MB_CONSOLE_OPT_UART_CLOCK_HZ 24000000u
#define MB_CONSOLE_OPT_TX_PIN 6
#define MB_CONSOLE_OPT_RX_PIN 8
#define MB_CONSOLE_OPT_TX_PAD 48
#define MB_CONSOLE_OPT_RX_PAD 49
#define MB_EXIT_BASE 0x100000u
"""


def _clang_arm(target: str, *cpu: str) -> list[str]:
    return ["clang", f"--target={target}", *cpu, "-nostdinc", "-isystem", f"{PICOLIBC_ARM}/include",
            "-isystem", f"{CLANG_RESOURCE}/include"]


ARM_GCC = ["arm-none-eabi-gcc", "-mthumb"]
RV32_GCC = ["riscv64-unknown-elf-gcc", "--specs=picolibc.specs", "-march=rv32imac", "-mabi=ilp32",
            "-misa-spec=2.2"]
COMPILERS = {
    "cortex-m0plus-gcc": ARM_GCC + ["-mcpu=cortex-m0plus"],
    "cortex-m3-gcc": ARM_GCC + ["-mcpu=cortex-m3"],
    "cortex-m4f-gcc": ARM_GCC + ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"],
    "cortex-m7-gcc": ARM_GCC + ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"],
    "cortex-m55-gcc": ARM_GCC + ["-mcpu=cortex-m55", "-mfloat-abi=hard"],
    "cortex-m0plus-clang": _clang_arm("thumbv6m-none-eabi", "-mcpu=cortex-m0plus", "-mfloat-abi=soft"),
    "cortex-m4f-clang": _clang_arm("thumbv7em-none-eabihf", "-mcpu=cortex-m4", "-mfloat-abi=hard"),
    "cortex-m55-clang": _clang_arm("thumbv8.1m.main-none-eabihf", "-mcpu=cortex-m55",
                                   "-mfloat-abi=hard"),
    "rv32imac-gcc": RV32_GCC,
    # GCC 12's default ISA spec leaves Zicsr out of rv32imac: the runtime must not need it.
    "rv32imac-gcc-isa20191213": RV32_GCC[:-1],
    "host-gcc": ["gcc"],
    "host-clang": ["clang"],
}

COMMON = ["support/print.c", "aot/main.c", "aot/self_test.c"]
MMIO_UARTS = ["drivers/console/ns16550.c", "drivers/console/sifive_uart.c",
              "drivers/console/cmsdk_uart.c"]
ARM_ONLY = ["startup/cortex_m.c", "drivers/console/stm32_usart.c", "drivers/console/nrf_uarte.c",
            "drivers/console/rp2040_uart.c", "drivers/console/apollo3_uart.c",
            "drivers/console/semihosting.c", "drivers/timer/systick.c",
            "drivers/exit/semihosting.c", "drivers/exit/halt.c",
            "startup/cxx_abi.c", "startup/libc_syscalls.c"]
SOURCES = {
    "arm": COMMON + MMIO_UARTS + ARM_ONLY + ["drivers/timer/dwt.c"],
    # No DWT cycle counter on Armv6-M; the RP2040's second-stage loader is Armv6-M code.
    "armv6m": COMMON + MMIO_UARTS + ARM_ONLY + ["startup/rp2040_boot2.S"],
    "rv32": COMMON + MMIO_UARTS + ["startup/riscv32.S", "startup/cxx_abi.c",
                                   "startup/libc_syscalls.c",
                                   "drivers/timer/mcycle.c",
                                   "drivers/exit/sifive_test.c", "drivers/exit/halt.c",
                                   "drivers/console/esp32_uart.c",
                                   "drivers/timer/esp32c3_systimer.c"],
    "host": COMMON + ["drivers/console/posix_stdio.c", "drivers/timer/clock_gettime.c",
                      "drivers/exit/process.c"],
}


def _family(target: str) -> str:
    if target.startswith("cortex-m0plus"):
        return "armv6m"
    if target.startswith("cortex-m"):
        return "arm"
    return target.split("-")[0].replace("rv32imac", "rv32")


def _need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


def _run(command: list[str], cwd: Path) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, command))}:\n{result.stderr}"


def _compile(compiler: list[str], sources: list[Path], cwd: Path, extra: list[str] = ()) -> None:
    c_sources = [s for s in sources if s.suffix == ".c"]
    asm_sources = [s for s in sources if s.suffix == ".S"]
    includes = [f"-I{cwd}", f"-I{INCLUDE}"]
    if c_sources:
        _run(compiler + FLAGS + list(extra) + includes + [str(s) for s in c_sources], cwd)
    if asm_sources:
        _run(compiler + ASM_FLAGS + list(extra) + includes + [str(s) for s in asm_sources], cwd)


@pytest.mark.parametrize("target", COMPILERS)
def test_runtime_compiles_warning_free(target, tmp_path):
    compiler = COMPILERS[target]
    _need(compiler[0])
    (tmp_path / "mb_board_config.h").write_text(BOARD_CONFIG)
    sources = [RUNTIME / s for s in SOURCES[_family(target)]]
    _compile(compiler, sources, tmp_path)
    assert {p.stem for p in tmp_path.glob("*.o")} == {s.stem for s in sources}
    if _family(target) in ("arm", "armv6m"):
        # The STM32 driver's other register layout (F0/F3/F7/L4...).
        v2 = tmp_path / "v2"
        v2.mkdir()
        (v2 / "mb_board_config.h").write_text(BOARD_CONFIG + "#define MB_CONSOLE_OPT_USART_V2 1\n")
        _compile(compiler, [RUNTIME / "drivers/console/stm32_usart.c"], v2)


@pytest.mark.parametrize("driver, message", [
    ("stm32_usart.c", "transport.options.pclk_hz"),
    ("rp2040_uart.c", "transport.options.uart_clock_hz"),
    ("nrf_uarte.c", "transport.options.tx_pin"),
    ("apollo3_uart.c", "transport.options.tx_pad"),
])
def test_missing_required_option_names_the_yaml_key(driver, message, tmp_path):
    _need("arm-none-eabi-gcc")
    (tmp_path / "mb_board_config.h").write_text(
        '#define MB_BOARD_NAME "x"\n#define MB_CPU_CLOCK_HZ 1u\n#define MB_TIMER_HZ 1u\n'
        "#define MB_CONSOLE_BASE 0x40000000u\n#define MB_CONSOLE_BAUD 115200u\n")
    result = subprocess.run(COMPILERS["cortex-m4f-gcc"] + FLAGS + [f"-I{tmp_path}", f"-I{INCLUDE}",
                            str(RUNTIME / "drivers/console" / driver), "-o", str(tmp_path / "x.o")],
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert message in result.stderr


# ---------------------------------------------------------------------------------------------
# Firmware on QEMU

LINKER_SCRIPT = """\
ENTRY({entry})
MEMORY
{{
  code (rx)  : ORIGIN = {code_origin:#x}, LENGTH = {code_length:#x}
  data (rwx) : ORIGIN = {data_origin:#x}, LENGTH = {data_length:#x}
}}
SECTIONS
{{
  .text :
  {{
    KEEP(*(.mb_vectors))
    KEEP(*(.mb_start))
    *(.text .text.*)
    *(.rodata .rodata.* .srodata .srodata.*)
    . = ALIGN(4);
    __preinit_array_start = .;
    KEEP(*(.preinit_array))
    __preinit_array_end = .;
    __init_array_start = .;
    KEEP(*(SORT_BY_INIT_PRIORITY(.init_array.*)))
    KEEP(*(.init_array))
    __init_array_end = .;
    __mb_copy_table_start = .;
    LONG(LOADADDR(.data)) LONG(ADDR(.data)) LONG(ADDR(.data) + SIZEOF(.data))
    __mb_copy_table_end = .;
    __mb_zero_table_start = .;
    LONG(ADDR(.bss)) LONG(ADDR(.bss) + SIZEOF(.bss))
    LONG(ADDR(.mb_workspace)) LONG(ADDR(.mb_workspace) + SIZEOF(.mb_workspace))
    __mb_zero_table_end = .;
  }} > code
  .ARM.exidx : {{ *(.ARM.exidx*) }} > code
  .data : ALIGN(4)
  {{
    *(.data .data.*)
    __global_pointer$ = . + 0x800;
    *(.sdata .sdata.*)
    . = ALIGN(4);
  }} > data AT > code
  .bss (NOLOAD) : ALIGN(4)
  {{
    *(.sbss .sbss.* .bss .bss.* COMMON)
    . = ALIGN(4);
  }} > data
  .mb_workspace (NOLOAD) : ALIGN(4)
  {{
    *(.mb_workspace)
    . = ALIGN(4);
  }} > data
  .stack (NOLOAD) : ALIGN(8)
  {{
    __mb_stack_limit = .;
    . += {stack_size:#x};
    __mb_stack_top = .;
  }} > data
}}
"""

# Two fake models. "check" tests the data path: its inputs must be copied in before every run
# (it overwrites one in place), .data must have been copied from flash and .bss cleared.
# "spin" runs a loop of known length (2 instructions per iteration) for the timer.
FAKE_MODELS = r"""
#include "microbuild/aot.h"

#ifndef SPIN_ITERATIONS
#define SPIN_ITERATIONS 1000000u
#endif
#ifndef SPIN_STATUS
#define SPIN_STATUS 0
#endif

static uint32_t runs;                      /* .bss */
static volatile uint32_t data_magic = 0xA5A5F00Du;  /* .data (volatile: kept in RAM) */

static uint8_t check_workspace[32] __attribute__((section(".mb_workspace"), aligned(4)));
static uint8_t spin_workspace[4] __attribute__((section(".mb_workspace"), aligned(4)));

static int check_run(uint8_t *w)
{
    for (int i = 0; i < 4; i++) {
        w[8 + i] = (uint8_t)(w[i] + w[4 + (i & 1)]);
    }
    w[0] ^= 0xFFu;
    runs++;
    for (int i = 0; i < 4; i++) {
        w[12 + i] = (uint8_t)(runs >> (8 * i));
        w[16 + i] = (uint8_t)(data_magic >> (8 * i));
    }
    return 0;
}

static int spin_run(uint8_t *w)
{
    (void)w;
#ifdef TEST_FAULT
#if defined(__arm__)
    __asm__ volatile ("udf #0");
#else
    __asm__ volatile ("unimp");
#endif
#endif
    uint32_t n = SPIN_ITERATIONS;
#if defined(__arm__) && defined(__ARM_ARCH_6M__) && !defined(__clang__)
    /* GCC's Armv6-M inline assembly is in divided syntax, where SUB sets the flags */
    __asm__ volatile ("1: sub %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
#elif defined(__arm__)
    __asm__ volatile ("1: subs %0, %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
#elif defined(__riscv)
    __asm__ volatile ("1: addi %0, %0, -1\n\tbnez %0, 1b" : "+r"(n));
#else
    while (n != 0u) {
        __asm__ volatile ("" : "+r"(n)); /* keep the loop */
        n--;
    }
#endif
    return SPIN_STATUS;
}

static const uint8_t check_in0[4] = {1, 2, 3, 4};
static const uint8_t check_in1[2] = {0x10, 0x20};
static const mb_aot_tensor check_inputs[] = {{check_in0, 4, 0}, {check_in1, 2, 4}};
static const mb_aot_tensor check_outputs[] = {{0, 4, 8}, {0, 2, 0}, {0, 8, 12}};

const mb_aot_model mb_aot_models[] = {
    {"check", check_run, check_workspace, 2, 3, check_inputs, check_outputs},
    {"spin", spin_run, spin_workspace, 0, 0, 0, 0},
};
const uint32_t mb_aot_model_count = 2;
"""

BOARD_INIT = """\
#include "mb_board_config.h"
#include "microbuild/platform.h"

void mb_board_init(void)
{
}
"""

REPEATS = 3

# A console through semihosting (SYS_WRITEC: one character to QEMU's stderr), for a QEMU machine
# whose UART has no microbuild driver.
SEMIHOSTING_CONSOLE = r"""
#include "microbuild/platform.h"

void mb_console_init(void)
{
}

void mb_console_write(const void *data, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        register uint32_t operation __asm__("r0") = 0x03u;
        register const uint8_t *character __asm__("r1") = (const uint8_t *)data + i;
        __asm__ volatile ("bkpt 0xab" : "+r"(operation) : "r"(character) : "memory");
    }
}

int mb_console_try_read(void)
{
    return -1;
}

uint8_t mb_console_read(void)
{
    for (;;) {
    }
}
"""


@dataclass
class QemuBoard:
    name: str
    qemu: list[str]
    cpu: list[str]  # compiler flags selecting the core
    code: tuple[int, int]
    data: tuple[int, int]
    config: dict[str, str]
    drivers: list[str]
    arch: str = "arm"
    clang_target: str = ""
    # Timer ticks per second of QEMU's virtual time (under -icount shift=0, 1 instruction = 1 ns):
    # SysTick counts its modelled clock; RISC-V mcycle counts instructions, i.e. 1 GHz.
    icount_timer_hz: int = 0
    extra_sources: dict[str, str] = field(default_factory=dict)  # file name -> C source
    console_on_stderr: bool = False  # QEMU writes semihosting output to its stderr
    halts: bool = False  # no exit device: the firmware ends in the halt driver


def _arm_qemu(machine: str) -> list[str]:
    return ["qemu-system-arm", "-M", machine, "-display", "none", "-monitor", "none", "-serial",
            "stdio", "-semihosting-config", "enable=on,target=native", "-icount", "shift=0"]


CMSDK = ["drivers/console/cmsdk_uart.c", "drivers/timer/systick.c", "drivers/exit/semihosting.c"]
M4F = ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
QEMU_BOARDS = {
    b.name: b for b in [
        QemuBoard("mps2-an385", _arm_qemu("mps2-an385"), ["-mcpu=cortex-m3"],
                  (0, 0x400000), (0x20000000, 0x400000),
                  {"MB_CONSOLE_BASE": "0x40004000u", "MB_CPU_CLOCK_HZ": "25000000u"}, CMSDK),
        QemuBoard("mps2-an386", _arm_qemu("mps2-an386"), M4F,
                  (0, 0x400000), (0x20000000, 0x400000),
                  {"MB_CONSOLE_BASE": "0x40004000u", "MB_CPU_CLOCK_HZ": "25000000u"}, CMSDK,
                  clang_target="thumbv7em-none-eabihf"),
        QemuBoard("mps2-an500", _arm_qemu("mps2-an500"),
                  ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"],
                  (0, 0x400000), (0x20000000, 0x400000),
                  {"MB_CONSOLE_BASE": "0x40004000u", "MB_CPU_CLOCK_HZ": "25000000u"}, CMSDK),
        QemuBoard("mps3-an547", _arm_qemu("mps3-an547"), ["-mcpu=cortex-m55", "-mfloat-abi=hard"],
                  (0, 0x80000), (0x20000000, 0x80000),
                  {"MB_CONSOLE_BASE": "0x59303000u", "MB_CPU_CLOCK_HZ": "32000000u"}, CMSDK,
                  clang_target="thumbv8.1m.main-none-eabihf"),
        QemuBoard("netduinoplus2", _arm_qemu("netduinoplus2"), M4F,
                  (0x08000000, 0x100000), (0x20000000, 0x30000),
                  {"MB_CONSOLE_BASE": "0x40011000u", "MB_CPU_CLOCK_HZ": "168000000u",
                   "MB_CONSOLE_OPT_PCLK_HZ": "84000000u"},
                  ["drivers/console/stm32_usart.c", "drivers/timer/systick.c",
                   "drivers/exit/semihosting.c"]),
        # Not a microbuild board: QEMU's Stellaris LM3S6965 has PL011 UARTs, so it runs the
        # RP2040's PL011 driver (the RP2040 itself is not emulated). Its SysTick runs at the
        # 12.5 MHz QEMU models for that chip at reset.
        QemuBoard("lm3s6965evb-pl011", _arm_qemu("lm3s6965evb"), ["-mcpu=cortex-m3"],
                  (0, 0x40000), (0x20000000, 0x10000),
                  {"MB_CONSOLE_BASE": "0x4000C000u", "MB_CPU_CLOCK_HZ": "12000000u",
                   "MB_CONSOLE_OPT_UART_CLOCK_HZ": "12000000u"},
                  ["drivers/console/rp2040_uart.c", "drivers/timer/systick.c",
                   "drivers/exit/semihosting.c"], icount_timer_hz=12_500_000),
        # Not a microbuild board: the BBC micro:bit's nRF51 (Cortex-M0, Armv6-M) runs the
        # Armv6-M start-up, SysTick and semihosting exit; its console is semihosting.
        QemuBoard("microbit-armv6m", _arm_qemu("microbit"), ["-mcpu=cortex-m0"],
                  (0, 0x40000), (0x20000000, 0x4000),
                  {"MB_CPU_CLOCK_HZ": "16000000u"},
                  ["drivers/timer/systick.c", "drivers/exit/semihosting.c"],
                  extra_sources={"semihosting_console.c": SEMIHOSTING_CONSOLE},
                  clang_target="thumbv6m-none-eabi",
                  console_on_stderr=True),
        QemuBoard("riscv32-virt",
                  ["qemu-system-riscv32", "-M", "virt", "-bios", "none", "-display", "none",
                   "-monitor", "none", "-serial", "stdio", "-icount", "shift=0"],
                  ["-march=rv32imac", "-mabi=ilp32", "-misa-spec=2.2"],
                  (0x80000000, 0x100000), (0x80100000, 0x100000),
                  {"MB_CONSOLE_BASE": "0x10000000u", "MB_CPU_CLOCK_HZ": "10000000u",
                   "MB_EXIT_BASE": "0x100000u"},
                  ["drivers/console/ns16550.c", "drivers/timer/mcycle.c",
                   "drivers/exit/sifive_test.c"], arch="rv32", icount_timer_hz=1_000_000_000),
        # Not a microbuild board yet: QEMU's SiFive E (FE310) runs the SiFive UART driver, and the
        # halt driver (it has no test device to exit through).
        QemuBoard("sifive_e",
                  ["qemu-system-riscv32", "-M", "sifive_e", "-display", "none", "-monitor", "none",
                   "-serial", "stdio", "-icount", "shift=0"],
                  ["-march=rv32imac", "-mabi=ilp32", "-misa-spec=2.2"],
                  (0x20400000, 0x400000), (0x80000000, 0x4000),
                  {"MB_CONSOLE_BASE": "0x10013000u", "MB_CPU_CLOCK_HZ": "16000000u"},
                  ["drivers/console/sifive_uart.c", "drivers/timer/mcycle.c",
                   "drivers/exit/halt.c"], arch="rv32", icount_timer_hz=1_000_000_000,
                  halts=True),
    ]
}


def _timer_hz(board: QemuBoard) -> int:
    return int(board.config["MB_CPU_CLOCK_HZ"].rstrip("u"))


def build_firmware(board: QemuBoard, out: Path, toolchain: str = "gcc",
                   defines: dict[str, str] | None = None) -> Path:
    """Builds the AOT firmware with the fake models for `board` into `out`; returns the ELF.
    toolchain: "gcc" (newlib-nano on Arm, picolibc on RV32) or "clang" (lld + picolibc, Arm)."""
    out.mkdir(parents=True, exist_ok=True)
    config = {"MB_BOARD_NAME": f'"{board.name}"', "MB_CONSOLE_BAUD": "115200u",
              "MB_TIMER_HZ": f"{_timer_hz(board)}u", **board.config}
    (out / "mb_board_config.h").write_text("".join(f"#define {k} {v}\n" for k, v in config.items()))
    (out / "mb_aot_models.c").write_text(FAKE_MODELS)
    (out / "mb_board_init.c").write_text(BOARD_INIT)
    arm = board.arch == "arm"
    (out / "fw.ld").write_text(LINKER_SCRIPT.format(
        entry="mb_reset_handler" if arm else "_start", code_origin=board.code[0],
        code_length=board.code[1], data_origin=board.data[0], data_length=board.data[1],
        stack_size=min(0x4000, board.data[1] // 4)))
    startup = "startup/cortex_m.c" if arm else "startup/riscv32.S"
    sources = [RUNTIME / s for s in [startup, "startup/libc_syscalls.c", *board.drivers, *COMMON]]
    for file_name, text in board.extra_sources.items():
        (out / file_name).write_text(text)
    sources += [out / name for name in ["mb_aot_models.c", "mb_board_init.c", *board.extra_sources]]
    extra = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    extra += [f"-DMB_AOT_REPEATS={REPEATS}", "-ffunction-sections", "-fdata-sections"]

    if toolchain == "clang":
        assert arm and board.clang_target
        compiler = _clang_arm(board.clang_target, *[f for f in board.cpu if "fpu" not in f])
        gcc_flags = ARM_GCC + board.cpu
        multilib = subprocess.run(gcc_flags + ["--specs=picolibc.specs", "-print-multi-directory"],
                                  capture_output=True, text=True, check=True).stdout.strip()
        libgcc = subprocess.run(gcc_flags + ["-print-libgcc-file-name"], capture_output=True,
                                text=True, check=True).stdout.strip()
        _compile(compiler, sources, out, extra)
        link = compiler[:3] + ["-fuse-ld=lld", "-nostdlib", "-T", "fw.ld", "-Wl,--gc-sections",
                               *sorted(p.name for p in out.glob("*.o")),
                               f"{PICOLIBC_ARM}/lib/{multilib}/libc.a", libgcc, "-o", "fw.elf"]
    else:
        compiler = (ARM_GCC + board.cpu if arm else
                    ["riscv64-unknown-elf-gcc", "--specs=picolibc.specs"] + board.cpu)
        _compile(compiler, sources, out, extra)
        libc = ["--specs=nano.specs"] if arm else []
        link = compiler + libc + ["-nostartfiles", "-T", "fw.ld", "-Wl,--gc-sections",
                                  *sorted(p.name for p in out.glob("*.o")), "-o", "fw.elf"]
    _run(link, out)
    return out / "fw.elf"


def run_qemu(board: QemuBoard, elf: Path, timeout: float = 20) -> tuple[int | None, str]:
    """Runs the firmware; returns QEMU's exit status and the console output. A board without an
    exit device (board.halts) is stopped once it has printed its "mb-aot end" line, and its
    status is None."""
    if board.halts:
        return None, _run_qemu_until_end(board, elf, timeout)
    try:
        result = subprocess.run(board.qemu + ["-kernel", str(elf)], stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:  # subprocess.run kills QEMU before raising
        raise AssertionError(f"QEMU did not exit within {timeout} s; output: {e.stdout!r}") from e
    console = result.stderr if board.console_on_stderr else result.stdout
    return result.returncode, console.decode("ascii", "replace")


def _run_qemu_until_end(board: QemuBoard, elf: Path, timeout: float) -> str:
    output = b""
    with subprocess.Popen(board.qemu + ["-kernel", str(elf)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as qemu:
        try:
            selector = selectors.DefaultSelector()
            selector.register(qemu.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + timeout
            while not re.search(rb"mb-aot end [^\n]*\n", output):
                left = deadline - time.monotonic()
                assert left > 0 and selector.select(left), f"no end line within {timeout} s: {output!r}"
                chunk = os.read(qemu.stdout.fileno(), 4096)
                assert chunk, f"QEMU ended without an end line: {output!r}"
                output += chunk
        finally:
            qemu.kill()
    return output.decode("ascii", "replace")


def _expected_lines(board: QemuBoard, spin_status: int = 0) -> list[str]:
    return [
        f"mb-aot begin {board.name} {_timer_hz(board)} 2",
        "mb-aot output check 0 4 11221324",   # computed from freshly copied inputs
        "mb-aot output check 1 2 fe02",       # the input the model overwrote in place
        f"mb-aot output check 2 8 {REPEATS:02x}0000000df0a5a5",  # .bss run count, .data word
        "mb-aot ticks check *",
        "mb-aot status check 0",
        "mb-aot ticks spin *",
        f"mb-aot status spin {spin_status}",
        f"mb-aot end {1 if spin_status else 0}",
    ]


def _check_output(board: QemuBoard, output: str, spin_status: int = 0,
                  line_count: int | None = None) -> dict[str, int]:
    """Checks the console output against _expected_lines (its first line_count lines only, if
    given); returns the ticks printed per model."""
    lines = output.splitlines()
    expected = _expected_lines(board, spin_status)[:line_count]
    assert len(lines) == len(expected), output
    ticks = {}
    for line, want in zip(lines, expected):
        if want.endswith("*"):
            assert line.startswith(want[:-1]), output
            ticks[line.split()[2]] = int(line.split()[3])
        else:
            assert line == want, output
    return ticks


def _need_board(board: QemuBoard, toolchain: str = "gcc") -> None:
    _need(board.qemu[0], "arm-none-eabi-gcc" if board.arch == "arm" else "riscv64-unknown-elf-gcc")
    if toolchain == "clang":
        _need("clang", "ld.lld")


SPIN = 1_000_000  # 2 million instructions


@pytest.mark.parametrize("name", QEMU_BOARDS)
def test_aot_firmware_runs_on_qemu(name, tmp_path):
    board = QEMU_BOARDS[name]
    _need_board(board)
    elf = build_firmware(board, tmp_path, defines={"SPIN_ITERATIONS": f"{SPIN}u"})
    status, output = run_qemu(board, elf)
    assert status == (None if board.halts else 0), output
    ticks = _check_output(board, output)
    # Under -icount shift=0 an instruction takes 1 ns of virtual time, so the timer counts
    # timer_hz / 1e9 per instruction (the loop's 2 million instructions plus a little).
    expected = 2 * SPIN * (board.icount_timer_hz or _timer_hz(board)) / 1e9
    assert expected <= ticks["spin"] <= expected * 1.01 + 2, output
    # Repeatable run to run.
    status, again = run_qemu(board, elf)
    assert status == (None if board.halts else 0) and _check_output(board, again) == ticks


@pytest.mark.parametrize("name", ["mps2-an385", "mps3-an547", "microbit-armv6m", "riscv32-virt"])
def test_model_status_and_fault_become_exit_codes(name, tmp_path):
    board = QEMU_BOARDS[name]
    _need_board(board)
    elf = build_firmware(board, tmp_path / "status", defines={"SPIN_STATUS": "7"})
    status, output = run_qemu(board, elf)
    assert status == 1, output
    _check_output(board, output, spin_status=7)

    elf = build_firmware(board, tmp_path / "fault", defines={"TEST_FAULT": "1"})
    status, output = run_qemu(board, elf)
    # Arm: UDF escalates to HardFault (exception 3); RISC-V: illegal instruction (cause 2).
    assert status == (128 + 3 if board.arch == "arm" else 128 + 2), output
    _check_output(board, output, line_count=6)  # everything up to the faulting model


@pytest.mark.parametrize("name", ["mps2-an386", "microbit-armv6m", "mps3-an547"])
def test_clang_lld_picolibc_firmware_runs_on_qemu(name, tmp_path):
    board = QEMU_BOARDS[name]
    _need_board(board, "clang")
    elf = build_firmware(board, tmp_path, toolchain="clang", defines={"SPIN_ITERATIONS": f"{SPIN}u"})
    status, output = run_qemu(board, elf)
    assert status == 0, output
    _check_output(board, output)


ECHO_HEX = r"""
#include "microbuild/platform.h"

/* Echoes each input byte as hex until end of input (where mb_console_read exits with 0). */
int main(void)
{
    mb_console_init();
    for (;;) {
        const int waiting = mb_console_try_read();
        if (waiting >= 0) {
            const uint8_t byte = (uint8_t)waiting;
            mb_print("t");
            mb_print_hex(&byte, 1);
        }
        const uint8_t byte = mb_console_read();
        mb_print_hex(&byte, 1);
    }
}
"""


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_host_firmware_runs(compiler, tmp_path):
    _need(compiler)
    (tmp_path / "mb_board_config.h").write_text(
        '#define MB_BOARD_NAME "host"\n#define MB_TIMER_HZ 1000000000u\n')
    (tmp_path / "mb_aot_models.c").write_text(FAKE_MODELS)
    (tmp_path / "echo.c").write_text(ECHO_HEX)
    drivers = [RUNTIME / d for d in ["drivers/console/posix_stdio.c", "drivers/timer/clock_gettime.c",
                                     "drivers/exit/process.c", "support/print.c"]]
    common = [compiler, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2",
              f"-DMB_AOT_REPEATS={REPEATS}", f"-I{tmp_path}", f"-I{INCLUDE}"]
    _run(common + [str(d) for d in drivers] + [str(RUNTIME / "aot/main.c"),
                                                 str(RUNTIME / "aot/self_test.c"),
                                                 "mb_aot_models.c", "-o", "aot"], tmp_path)
    result = subprocess.run([str(tmp_path / "aot")], capture_output=True, text=True, timeout=20,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    board = QemuBoard("host", [], [], (0, 0), (0, 0), {"MB_CPU_CLOCK_HZ": "1000000000u"}, [])
    _check_output(board, result.stdout)

    _run(common + [str(d) for d in drivers] + ["echo.c", "-o", "echo"], tmp_path)
    result = subprocess.run([str(tmp_path / "echo")], input=b"AB\x00\xff", capture_output=True,
                            timeout=20, check=False)
    assert result.returncode == 0
    # The first byte is either seen by try_read (prefixed "t") or by read; all arrive in order.
    assert result.stdout.replace(b"t", b"") == b"414200ff"
