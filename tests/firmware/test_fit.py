"""Fit analysis of linked firmware: real ELFs linked here with arm-none-eabi-gcc (and the host gcc),
checked against what binutils says about the same files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from microbuild.boards import load_board, load_board_file
from microbuild.firmware.fit import (Contribution, FitReport, Overflow, RegionUsage, Symbol,
                                     analyze_elf, fit_error, section_totals, widened_weights)
from microbuild.errors import FitError, MicrobuildError

ARM_GCC = shutil.which("arm-none-eabi-gcc")
needs_arm = pytest.mark.skipif(ARM_GCC is None, reason="arm-none-eabi-gcc is not installed")


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


# --- building test firmware ---------------------------------------------------------------------

FIRMWARE_C = """
#include <stdint.h>

__attribute__((section(".mb_vectors"), used)) const uint32_t vectors[16] = {0x20001000u};

__attribute__((section(".mb_workspace"), aligned(16), used))
uint8_t mb_aot_workspace_kws[WORKSPACE];

__attribute__((section(".mb_weights"), aligned(16), used)) const int8_t kws_w0[WEIGHTS0] = {1};
__attribute__((section(".mb_weights"), aligned(16), used)) const int8_t kws_w1[200] = {2};

/* Ten read-only arrays of distinct sizes, so that the top-8 list of the code region is known. */
#define ROARRAY(n) __attribute__((used)) const int32_t ro##n[50 + n] = {n};
ROARRAY(0) ROARRAY(1) ROARRAY(2) ROARRAY(3) ROARRAY(4)
ROARRAY(5) ROARRAY(6) ROARRAY(7) ROARRAY(8) ROARRAY(9)

__attribute__((used)) int32_t counters[10] = {1, 2, 3};
__attribute__((used)) uint32_t zeroes[64];

int touch(int i)
{
    mb_aot_workspace_kws[i] = (uint8_t)(kws_w0[i] + kws_w1[i]);
    counters[i]++;
    zeroes[i] = (uint32_t)ro9[i];
    return mb_aot_workspace_kws[i + 1];
}

void Reset_Handler(void)
{
    touch(3);
    for (;;) {
    }
}
"""


def linker_script(board, stack=1024, heap=256, extra="") -> str:
    """A test linker script laid out like microbuild's: the board's regions and placement."""
    p = board.placement
    memory = "\n".join(f"  {r.name} ({r.access}) : ORIGIN = 0x{r.origin:08x}, LENGTH = {r.length}"
                       for r in board.regions.values())
    return f"""
MEMORY
{{
{memory}
}}
ENTRY(Reset_Handler)
SECTIONS
{{
  .mb_vectors : {{ KEEP(*(.mb_vectors)) }} > {p['text']}
  .text : {{ *(.text*) }} > {p['text']}
  .rodata : {{ *(.rodata*) }} > {p['rodata']}
  .mb_weights : ALIGN(16) {{ KEEP(*(.mb_weights)) }} > {p['weights']}
  .mb_copy_table : {{ LONG(LOADADDR(.data)) LONG(ADDR(.data)) LONG(SIZEOF(.data)) }} > {p['text']}
  .data : {{ *(.data*) }} > {p['data']} AT> {p['text']}
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > {p['bss']}
  .mb_workspace (NOLOAD) : ALIGN(16) {{ KEEP(*(.mb_workspace)) }} > {p['workspace']}
  .heap (NOLOAD) : ALIGN(8) {{ . += {heap}; }} > {p['heap']}
  .stack (NOLOAD) : ALIGN(8) {{
    __mb_stack_limit = .; . += {stack}; __mb_stack_top = .;
  }} > {p['stack']}
  {extra}
  /DISCARD/ : {{ *(.ARM.attributes) *(.comment) }}
}}
"""


def link(tmp_path: Path, board, *, workspace=3000, weights0=1000, stack=1024, heap=256,
         extra_c="", extra_ld="", overflow=False) -> tuple[Path, str]:
    """Compile and link the test firmware; returns the ELF and the linker's messages."""
    src = tmp_path / "fw.c"
    src.write_text(FIRMWARE_C + extra_c)
    script = tmp_path / "fw.ld"
    script.write_text(linker_script(board, stack, heap, extra_ld))
    elf = tmp_path / "fw.elf"
    cmd = [ARM_GCC, "-mcpu=cortex-m3", "-mthumb", "-O1", "-nostdlib", "-nostartfiles",
           f"-DWORKSPACE={workspace}", f"-DWEIGHTS0={weights0}", "-T", str(script), str(src),
           "-o", str(elf)]
    if overflow:
        cmd.insert(1, "-Wl,--noinhibit-exec")
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert ("overflowed by" in result.stderr) == overflow, result.stderr
    return elf, result.stderr


def ld_overflows(stderr: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"region `(\w+)' overflowed by (\d+) bytes", stderr)}


def binutils_sections(elf: Path, tool="arm-none-eabi-objdump") -> dict[str, tuple[int, int, int]]:
    """Section name -> (size, VMA, LMA), as objdump -h prints them."""
    out = subprocess.run([tool, "-h", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    row = r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s"
    rows = re.findall(row, out, re.MULTILINE)
    return {name: (int(size, 16), int(vma, 16), int(lma, 16)) for name, size, vma, lma in rows}


def objdump_flags(elf: Path, tool="arm-none-eabi-objdump") -> dict[str, tuple[int, str]]:
    """Section name -> (size, the flags line objdump -h prints under it)."""
    out = subprocess.run([tool, "-h", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    rows = re.findall(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s.*\n\s+(.*)$", out, re.MULTILINE)
    return {name: (int(size, 16), f) for name, size, f in rows}


def size_a(elf: Path, tool="arm-none-eabi-size") -> dict[str, int]:
    out = subprocess.run([tool, "-A", "-d", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    rows = re.findall(r"^(\.\S+)\s+(\d+)\s+\d+", out, re.MULTILINE)
    return {name: int(size) for name, size in rows}


def board_file(tmp_path: Path, name: str, regions: str, placement: str, stack="1K",
               heap="256") -> Path:
    path = tmp_path / "defs" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    region_lines = "".join(f"    {line.strip()}\n" for line in regions.strip().splitlines())
    path.write_text(
        f"name: {name}\n"
        f"title: Test board {name}\n"
        "vendor: test\n"
        "cpu: {arch: armv7-m, core: cortex-m3, endian: little, clock_hz: 48000000}\n"
        "memory:\n"
        "  regions:\n"
        f"{region_lines}"
        f"  placement: {placement}\n"
        f"  stack_size: {stack}\n"
        f"  heap_size: {heap}\n"
        "toolchain: {family: gcc-arm-none-eabi, libc: newlib-nano}\n"
        'init: "/* nothing */"\n'
        "transport: {kind: serial, driver: stm32_usart, base: 0x40011000, baud: 115200}\n"
        "timer: {driver: dwt, frequency_hz: 48000000}\n"
        "flash:\n"
        "  - runner: openocd\n")
    return path


ALL_SRAM = ("{text: code, rodata: code, weights: code, data: sram, bss: sram, stack: sram, "
            "heap: sram, workspace: sram}")


def tiny_board(tmp_path: Path, code="64K", sram="16K"):
    """The VWW-on-a-small-part situation: 16 KiB of RAM."""
    return load_board_file(board_file(tmp_path, "tiny", f"""
        code: {{origin: 0x00000000, length: {code}, access: rx}}
        sram: {{origin: 0x20000000, length: {sram}, access: rwx}}
        """, ALL_SRAM))


# --- a firmware that fits -----------------------------------------------------------------------

@needs_arm
def test_fitting_firmware_numbers_match_binutils(tmp_path):
    board = load_board("mps2-an385")
    elf, _ = link(tmp_path, board)
    report = analyze_elf(elf, board)
    sizes = size_a(elf)
    headers = binutils_sections(elf)

    assert report.fits and report.overflows == [] and report.board == "mps2-an385"
    # Every section as binutils sees it (size -A lists every allocated section).
    assert {s.name: s.size for s in report.sections} == sizes
    for s in report.sections:
        size, vma, lma = headers[s.name]
        assert (s.size, s.vma) == (size, vma)
        if not s.nobits:
            assert s.lma == lma

    # .data: run address in sram, load image in code right after the code region's other sections.
    data_size, data_vma, data_lma = headers[".data"]
    assert data_size == 40 and data_vma == 0x20000000 and data_lma < 0x00400000

    code, sram = report.region("code"), report.region("sram")
    code_sections = [".mb_vectors", ".text", ".rodata", ".mb_weights", ".mb_copy_table"]
    sram_sections = [".data", ".bss", ".mb_workspace", ".heap", ".stack"]
    assert code.used == sum(sizes[n] for n in code_sections) + sizes[".data"]
    assert sram.used == sum(sizes[n] for n in sram_sections)
    assert {(c.section, c.role) for c in code.contributions} == \
        {(n, "run") for n in code_sections} | {(".data", "load")}
    assert {(c.section, c.role) for c in sram.contributions} == {(n, "run") for n in sram_sections}
    load = next(c for c in code.contributions if c.role == "load")
    assert (load.address, load.bytes) == (data_lma, 40)
    assert [c.bytes for c in code.contributions] == sorted((c.bytes for c in code.contributions),
                                                           reverse=True)
    assert (code.origin, code.length, sram.origin, sram.length) == (0, 4 << 20, 0x20000000, 4 << 20)
    assert code.free == code.length - code.used
    assert sram.percent == pytest.approx(100 * sram.used / (4 << 20))

    # The model's parts and the classic totals.
    assert report.workspace_bytes == sizes[".mb_workspace"] == 3000
    assert report.weights_bytes == sizes[".mb_weights"] == 1208  # 1000 padded to 1008, then 200
    assert (report.stack_bytes, report.heap_bytes) == (1024, 256)
    assert report.text == sizes[".mb_vectors"] + sizes[".text"]
    assert report.rodata == sizes[".rodata"] + sizes[".mb_copy_table"]
    assert (report.data, report.bss) == (40, 256)
    assert report.totals == {"text": report.text, "rodata": report.rodata, "weights": 1208,
                             "data": 40, "bss": 256, "workspace": 3000, "state": 0,
                             "stack": 1024, "heap": 256}
    assert section_totals(elf) == report.totals

    # Largest symbols: the sram region's, and the top 8 of the code region's (ro0..ro9 are
    # 200..236 bytes, below the two weight arrays).
    assert [(y.name, y.size, y.section, y.role) for y in sram.symbols] == [
        ("mb_aot_workspace_kws", 3000, ".mb_workspace", "run"),
        ("zeroes", 256, ".bss", "run"),
        ("counters", 40, ".data", "run")]
    assert [(y.name, y.size) for y in code.symbols] == [
        ("kws_w0", 1000), ("ro9", 236), ("ro8", 232), ("ro7", 228), ("ro6", 224), ("ro5", 220),
        ("ro4", 216), ("ro3", 212)]
    assert code.symbols[0].section == ".mb_weights" and code.symbols[1].section == ".rodata"

    # Output for the CLI.
    data = json.loads(json.dumps(report.to_dict()))
    assert data["fits"] is True and data["workspace_bytes"] == 3000
    assert [r["name"] for r in data["regions"]] == ["code", "sram"]
    assert data["regions"][1]["used"] == sram.used and data["regions"][1]["over"] == 0
    rows = report.table_rows()
    assert [row[:3] for row in rows] == [("code", f"{code.used / 1024:.1f} KiB", "4.00 MiB"),
                                         ("sram", f"{sram.used / 1024:.1f} KiB", "4.00 MiB")]
    assert rows[1][4].startswith("workspace 2.9 KiB, stack 1.0 KiB")
    with pytest.raises(ValueError):
        fit_error(report)


# --- overflows ----------------------------------------------------------------------------------

@needs_arm
def test_workspace_too_big_for_ram(tmp_path):
    board = tiny_board(tmp_path)
    # The VWW model's 55 KiB workspace on a part with 16 KiB of RAM.
    elf, stderr = link(tmp_path, board, workspace=56320, overflow=True)
    over = ld_overflows(stderr)["sram"]
    report = analyze_elf(elf, board)

    assert not report.fits
    assert [o.region for o in report.overflows] == ["sram"]
    o = report.overflows[0]
    assert o.over == over == report.region("sram").over
    assert (o.origin, o.length) == (0x20000000, 16384)
    assert o.used == 40 + 256 + 56320 + 256 + 1024 == report.region("sram").used
    assert [(c.section, c.bytes) for c in o.contributions] == [
        (".mb_workspace", 56320), (".stack", 1024), (".bss", 256), (".heap", 256), (".data", 40)]
    assert o.symbols[0].name == "mb_aot_workspace_kws"
    assert report.region("code").over == 0

    err = fit_error(report)
    assert isinstance(err, FitError) and isinstance(err, MicrobuildError) and err.exit_code == 1
    assert err.report is report
    message = " ".join(str(err).split())  # the message is wrapped at 100 columns
    assert message.startswith(f"The firmware does not fit on board tiny: region sram overflows "
                              f"by {over:,} bytes ({over / 1024:.1f} KiB).")
    for text in ["sram: 16,384 bytes (16.0 KiB) at 0x20000000", "57,896 bytes (56.5 KiB)",
                 ("The model workspace alone (.mb_workspace, 55.0 KiB) is larger than the "
                  "whole region (16.0 KiB)"), ".mb_workspace (model workspace)", "56,320 bytes",
                 ".stack (stack)", "mb_aot_workspace_kws", "in .mb_workspace",
                 "memory.placement.workspace", "choose a board with more RAM",
                 "use a smaller model"]:
        assert text in message, f"{text!r} not in:\n{message}"
    assert f"{over:,} bytes" in message
    assert "kws_w0" not in message  # the code region is fine
    assert "stack_size" not in message  # 1 KiB of stack would not save 40 KiB

    row = next(r for r in report.table_rows() if r[0] == "sram")
    assert row[3] == f"{100 * o.used / 16384:.1f}%" and row[4].startswith("OVERFLOWS by")
    assert report.to_dict()["overflows"][0]["over"] == over


@needs_arm
def test_stack_that_alone_overflows_is_named_in_the_advice(tmp_path):
    board = tiny_board(tmp_path, sram="4K")
    elf, stderr = link(tmp_path, board, workspace=16, stack=4096, overflow=True)
    report = analyze_elf(elf, board)
    o = report.overflows[0]
    assert (o.region, o.over) == ("sram", ld_overflows(stderr)["sram"])
    assert o.contributions[0].section == ".stack" and o.over < 4096
    message = " ".join(str(fit_error(report)).split())
    assert "lower memory.stack_size (now 4.0 KiB) if the firmware needs less stack" in message
    assert "memory.placement.workspace" not in message  # 16 bytes of workspace: no help


@needs_arm
def test_weights_too_big_for_flash(tmp_path):
    board = tiny_board(tmp_path, code="8K")
    elf, stderr = link(tmp_path, board, weights0=10000, overflow=True)
    report = analyze_elf(elf, board)
    assert [o.region for o in report.overflows] == ["code"]
    o = report.overflows[0]
    assert o.over == ld_overflows(stderr)["code"]
    # The .data load image lands past the end of flash too and is counted there.
    assert (".data", "load") in {(c.section, c.role) for c in o.contributions}
    assert o.contributions[0].section == ".mb_weights" and o.contributions[0].bytes == 10208
    message = " ".join(str(fit_error(report)).split())
    assert "code: 8,192 bytes (8.0 KiB) at 0x00000000" in message
    assert "memory.placement.weights" in message and "more flash" in message
    assert "kws_w0" in message and "memory.placement.workspace" not in message


@needs_arm
def test_overflow_into_an_adjacent_region_counts_against_the_first(tmp_path):
    """Like the STM32F7's DTCM and SRAM1: a workspace too big for the first spills, in address
    terms, into the second; ld and the report both blame the first."""
    board = load_board_file(board_file(tmp_path, "twin", """
        code: {origin: 0x08000000, length: 64K, access: rx}
        dtcm: {origin: 0x20000000, length: 4K, access: rwx}
        sram1: {origin: 0x20001000, length: 64K, access: rwx}
        """, "{text: code, rodata: code, weights: code, data: dtcm, bss: dtcm, stack: dtcm, "
             "heap: dtcm, workspace: dtcm}"))
    elf, stderr = link(tmp_path, board, workspace=8000, overflow=True)
    report = analyze_elf(elf, board)
    assert [o.region for o in report.overflows] == ["dtcm"]
    assert report.overflows[0].over == ld_overflows(stderr)["dtcm"]
    assert report.region("sram1").used == 0
    # The unused neighbour is offered as a home for the workspace.
    message = " ".join(str(fit_error(report)).split())
    assert "memory.placement.workspace in the board YAML) (sram1 has 64.0 KiB free)" in message


@needs_arm
def test_section_outside_every_region(tmp_path):
    board = tiny_board(tmp_path)
    elf, _ = link(tmp_path, board, extra_c='\n__attribute__((section(".odd"), used)) '
                                           'const uint8_t stray[100] = {1};\n',
                  extra_ld=".odd 0x10000000 : { KEEP(*(.odd)) }")
    report = analyze_elf(elf, board)
    assert not report.fits
    o = report.overflows[-1]
    assert o.region is None and o.over == 100
    assert [(c.section, c.address) for c in o.contributions] == [(".odd", 0x10000000)]
    assert "100 bytes lie outside every memory region" in " ".join(str(fit_error(report)).split())


# --- host ---------------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")
def test_host_elf_has_totals_only(tmp_path):
    src = tmp_path / "host.c"
    src.write_text(textwrap.dedent("""
        #include <stdint.h>
        __attribute__((section(".mb_workspace"), aligned(16))) uint8_t mb_aot_workspace_net[3000];
        __attribute__((section(".mb_weights"), aligned(16))) const int8_t net_w0[1000] = {1};
        __attribute__((section(".mb_weights"), aligned(16))) const int8_t net_w1[200] = {2};
        int32_t counters[10] = {1, 2, 3};
        int main(int argc, char **argv)
        {
            (void)argv;
            mb_aot_workspace_net[argc] = (uint8_t)(net_w0[argc] + net_w1[argc]);
            counters[argc]++;
            return mb_aot_workspace_net[argc + 1];
        }
        """))
    elf = tmp_path / "host.elf"
    subprocess.run(["gcc", "-O1", str(src), "-o", str(elf)], check=True)
    report = analyze_elf(elf, load_board("host"))
    assert report.is_host and report.fits and report.regions == [] and report.overflows == []
    assert (report.workspace_bytes, report.weights_bytes) == (3000, 1208)
    assert (report.stack_bytes, report.heap_bytes) == (0, 0)
    # Cross-check against objdump's flags: CODE -> text, READONLY -> rodata, no CONTENTS -> bss.
    flags = objdump_flags(elf, "objdump")
    alloc = {n: (size, f) for n, (size, f) in flags.items() if "ALLOC" in f}
    model = {".mb_workspace", ".mb_weights"}
    assert report.text == sum(size for n, (size, f) in alloc.items() if "CODE" in f) > 0
    assert report.rodata == sum(size for n, (size, f) in alloc.items()
                                if "READONLY" in f and "CODE" not in f and n not in model) > 0
    assert report.data == sum(size for n, (size, f) in alloc.items()
                              if "READONLY" not in f and "CONTENTS" in f and n not in model) >= 40
    assert report.bss == sum(size for n, (size, f) in alloc.items() if "CONTENTS" not in f)
    assert section_totals(elf) == report.totals
    rows = report.table_rows()
    assert ("workspace", "2.9 KiB", "-", "-", "model workspace") in rows
    assert ("weights", "1.2 KiB", "-", "-", "model weights") in rows
    assert json.loads(json.dumps(report.to_dict()))["regions"] == []


def test_unreadable_elf_is_a_user_error(tmp_path):
    (tmp_path / "junk.elf").write_text("not an elf")
    with pytest.raises(MicrobuildError, match="not an ELF file"):
        section_totals(tmp_path / "junk.elf")
    with pytest.raises(MicrobuildError, match="cannot read the linked firmware"):
        analyze_elf(tmp_path / "missing.elf", load_board("host"))


def test_weights_widened_by_a_variant_with_an_underscore_name_the_compact_variant():
    """``<prefix>_op<N>_weights_dsp_wide`` (FULLY_CONNECTED's dsp_wide, the LSTM's, SVDF's) is found
    like dsp16's, so the advice offers the compact variant; the linked kernel function tells
    which operator's dsp_wide it is."""
    symbols = [Symbol("kws_op3_weights_dsp_wide", 40000, ".mb_weights", 0x1000, "run"),
               Symbol("kws_op5_weights_dsp_wide", 2000, ".mb_weights", 0xb000, "run"),
               Symbol("kws_op0_weights_dsp16", 100, ".mb_weights", 0xc000, "run"),
               Symbol("kws_op1_weights_dsp_wide", 300, ".data", 0xd000, "load")]  # not weights
    fc = widened_weights(symbols, {"mb_fully_connected_s8_dsp_wide", "main"})
    assert [(w.opcode, w.variant, w.compact, w.ops, w.bytes) for w in fc] == [
        ("FULLY_CONNECTED", "dsp_wide", "dsp", (3, 5), 42000),
        ("CONV_2D", "dsp16", "dsp", (0,), 100)]
    lstm = widened_weights(symbols, {"mb_lstm_s8_dsp_wide"})
    assert lstm[0].opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM" and lstm[0].ops == (3, 5)
    # SVDF's function name is completed at emit time by the state type.
    svdf = widened_weights(symbols, {"mb_svdf_s8_s16_dsp_wide"})
    assert (svdf[0].opcode, svdf[0].compact, svdf[0].ops) == ("SVDF", "dsp", (3, 5))

    weights = Contribution(".mb_weights", 42100, "run", 0x1000, "weights")
    code = RegionUsage("code", 0, 32768, "rx", [weights])
    report = FitReport("fw.elf", "tiny", False, [], {}, [code],
                       [Overflow("code", 0, 32768, 42100, 42100 - 32768, [weights], [], fc)])
    message = " ".join(str(fit_error(report)).split())
    assert ("build with `--variant FULLY_CONNECTED=dsp` (dsp_wide stores the FULLY_CONNECTED "
            "weights of ops 3, 5 widened to int16, 41.0 KiB; dsp runs the same arithmetic on int8 "
            "weights, 20.5 KiB less") in message, message
