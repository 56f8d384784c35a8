"""Clock figures a board states, checked at validation, and the vector table sized by the board:
timer.frequency_hz against cpu.clock_hz (with the timers that legitimately differ), cpu.irq_count
against the architecture and in the linked firmware (run in QEMU with a 150-interrupt table), and
the nucleo-h743zi board built with its workspace in DTCM."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from microbuild import api
from microbuild.boards import load_board

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def problems_of(tmp_path: Path, name: str, text: str) -> list[str]:
    path = tmp_path / "boards" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return [str(p) for p in api.validate_board_files([path])]


# --- timer.frequency_hz against cpu.clock_hz ---------------------------------------------------

def test_a_core_clock_timer_that_disagrees_with_the_clock_names_both_places(tmp_path):
    problems = problems_of(tmp_path, "my-f746", """
        name: my-f746
        extends: stm32f746
        title: DWT left at the old HSI figure
        timer: {driver: dwt, frequency_hz: 16000000}
        """)
    assert len(problems) == 1
    problem = problems[0]
    child = tmp_path / "boards" / "my-f746.yaml"
    assert problem.startswith(f"{child}:4: timer.frequency_hz: 16000000 Hz differs from the core clock")
    # The other side: the clock and the built-in file:line that set it.
    assert "cpu.clock_hz is 216000000 Hz" in problem and "stm32f746.yaml:" in problem


def test_systick_on_a_qemu_board_must_equal_the_clock(tmp_path):
    problems = problems_of(tmp_path, "slow-an385", """
        name: slow-an385
        extends: mps2-an385
        title: clock changed, SysTick not
        cpu: {clock_hz: 50000000}
        """)
    assert len(problems) == 1 and "systick timer counts core cycles" in problems[0]
    assert "25000000 Hz differs" in problems[0] and "cpu.clock_hz is 50000000 Hz" in problems[0]


def test_mcycle_under_icount_counts_instructions_not_core_cycles(tmp_path):
    # riscv32-virt: clock 10 MHz, mcycle 1 GHz under -icount shift=0: valid as shipped.
    assert problems_of(tmp_path, "virt-copy", "name: virt-copy\nextends: riscv32-virt\n"
                                              "title: as shipped\n") == []
    problems = problems_of(tmp_path, "virt-wrong", """
        name: virt-wrong
        extends: riscv32-virt
        title: mcycle at the nominal clock
        timer: {driver: mcycle, frequency_hz: 10000000}
        """)
    assert len(problems) == 1
    assert "-icount shift=0" in problems[0] and "set it to 1000000000" in problems[0]
    shift2 = problems_of(tmp_path, "virt-shift2", """
        name: virt-shift2
        extends: riscv32-virt
        title: icount shift 2
        qemu: {args: [-bios, none, -icount, "shift=2"]}
        """)
    assert len(shift2) == 1 and "set it to 250000000" in shift2[0]


def test_avr_timer1_must_be_the_clock_through_a_prescaler(tmp_path):
    assert problems_of(tmp_path, "avr-div8", """
        name: avr-div8
        extends: atmega328p
        title: prescaler 8
        timer: {driver: avr_timer1, frequency_hz: 2000000}
        """) == []
    problems = problems_of(tmp_path, "avr-bad", """
        name: avr-bad
        extends: atmega328p
        title: no such prescaler
        timer: {driver: avr_timer1, frequency_hz: 3000000}
        """)
    assert len(problems) == 1 and "not the CPU clock divided by a Timer1 prescaler" in problems[0]
    assert "16000000, 2000000, 250000, 62500, 15625" in problems[0]


def test_every_builtin_board_states_consistent_clocks():
    from microbuild.boards.loader import builtin_boards_dir
    assert api.validate_board_files(sorted(builtin_boards_dir().glob("*.yaml"))) == []
    for name, hz in (("stm32f746", 216_000_000), ("nucleo-f746zg", 216_000_000),
                     ("nucleo-h743zi", 400_000_000), ("rp2040-pico", 125_000_000),
                     ("nrf52840dk", 64_000_000)):
        board = load_board(name)
        assert board.cpu["clock_hz"] == board.timer["frequency_hz"] == hz, name


# --- cpu.irq_count ------------------------------------------------------------------------------

def test_irq_count_is_checked_against_the_architecture(tmp_path):
    m0 = problems_of(tmp_path, "big-pico", """
        name: big-pico
        extends: rp2040-pico
        title: too many interrupts for Armv6-M
        cpu: {irq_count: 40}
        """)
    assert len(m0) == 1 and "cpu.irq_count: 40 interrupts, but armv6-m has at most 32" in m0[0]
    rv = problems_of(tmp_path, "virt-irqs", """
        name: virt-irqs
        extends: riscv32-virt
        title: no vector table here
        cpu: {irq_count: 16}
        """)
    assert len(rv) == 1 and "sizes a Cortex-M vector table; this board is rv32imac" in rv[0]
    schema = problems_of(tmp_path, "h7-huge", """
        name: h7-huge
        extends: nucleo-h743zi
        title: beyond Armv7-M
        cpu: {irq_count: 500}
        """)
    assert len(schema) == 1 and "cpu.irq_count" in schema[0] and "496" in schema[0]


def _vector_table(elf_path: Path) -> tuple[int, int, list[int]]:
    """(address, entries, words) of mb_vectors in a linked firmware."""
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        symbol = elf.get_section_by_name(".symtab").get_symbol_by_name("mb_vectors")[0]
        address, size = symbol["st_value"], symbol["st_size"]
        for segment in elf.iter_segments():
            start = segment["p_paddr"]
            if segment["p_type"] == "PT_LOAD" and start <= address < start + segment["p_filesz"]:
                data = segment.data()[address - start:address - start + size]
                break
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, size, 4)]
    return address, size // 4, words


def _symbol(elf_path: Path, name: str) -> int:
    with open(elf_path, "rb") as f:
        return ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name(name)[0]["st_value"]


def test_a_150_interrupt_vector_table_boots_and_runs_in_qemu(tmp_path):
    """mps2-an500 (Cortex-M7) with the H7's interrupt count: the table has 16 + 150 entries,
    aligned for VTOR, every interrupt on the default handler, and the model still runs bit-exact."""
    (tmp_path / "boards").mkdir()
    (tmp_path / "boards" / "an500-150irq.yaml").write_text(
        "name: an500-150irq\nextends: mps2-an500\ntitle: AN500 with 150 interrupts\n"
        "cpu: {irq_count: 150}\n")
    model = MODELS / "tiny_fc.tflite"
    build = api.build_firmware("an500-150irq", [model], tmp_path / "out")
    address, entries, words = _vector_table(build.elf)
    assert entries == 16 + 150 and address % 1024 == 0  # 664 bytes -> 1024-byte alignment
    default = _symbol(build.elf, "mb_default_handler")
    assert all(word == default for word in words[16:])
    result = api.run_firmware(build, timeout=60)
    np.testing.assert_array_equal(result.outputs["tiny_fc"][0],
                                  run_tflm(model, build.inputs("tiny_fc"))[0])
    # Without irq_count: the 32 interrupts of before.
    plain = api.build_firmware("mps2-an500", [model], tmp_path / "plain")
    assert _vector_table(plain.elf)[1] == 16 + 32


# --- nucleo-h743zi ------------------------------------------------------------------------------

def test_nucleo_h743zi_builds_ds_cnn_with_its_workspace_in_dtcm(tmp_path):
    board = load_board("nucleo-h743zi")
    regions = board.regions
    assert [(r.origin, r.length) for r in (regions["itcm"], regions["flash"], regions["dtcm"],
                                            regions["axi_sram"], regions["sram1"], regions["sram2"],
                                            regions["sram3"], regions["sram4"])] == [
        (0, 64 << 10), (0x08000000, 2 << 20), (0x20000000, 128 << 10), (0x24000000, 512 << 10),
        (0x30000000, 128 << 10), (0x30020000, 128 << 10), (0x30040000, 32 << 10),
        (0x38000000, 64 << 10)]
    result = subprocess.run([sys.executable, "-m", "microbuild", "build", "--board", "nucleo-h743zi",
                             "--model", str(MODELS / "ds_cnn.tflite"), "-o", str(tmp_path / "out"),
                             "--json"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    import json
    report = json.loads(result.stdout)
    size = report.get("size", report)
    assert size["fits"]
    by_region = {r["name"]: {c["section"] for c in r["contributions"]} for r in size["regions"]}
    assert ".mb_workspace" in by_region["dtcm"] and ".stack" in by_region["dtcm"]
    assert ".mb_weights" in by_region["flash"]
    elf = next((tmp_path / "out").rglob("*.elf"))
    address, entries, _ = _vector_table(elf)
    assert (address, entries) == (0x08000000, 16 + 150)
