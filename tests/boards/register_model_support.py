"""Run a board's compiled `init:` snippet against a model of the chip's registers.

No hardware is attached where microbuild is tested, so clock bring-up code is checked against the
reference manuals' register maps instead: microbuild generates ``mb_board_init.c`` for the board,
arm-none-eabi-gcc compiles it (warnings are errors), and the Unicorn CPU emulator executes the
machine code. Every load and store outside the code and stack goes to a ``RegisterModel``: a
dictionary of the registers the manual documents at those addresses, with their reset values and
the hardware's answers (a PLL that is switched on reports it is locked, a clock switch shows up in
the status field). An access to an address the model does not know is an error naming the address,
so a wrong base or offset fails the test; the trace of named reads and writes lets a test check
bit fields and the order the manual asks for.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from microbuild.boards import Board
from microbuild.firmware import board_files
from microbuild.paths import runtime_dir

unicorn = pytest.importorskip("unicorn", reason="the unicorn CPU emulator (pip install unicorn) "
                                                  "runs the compiled init snippets")
from unicorn import arm_const  # noqa: E402

CODE_BASE = 0x00100000  # where the test links the snippet (no chip has a register there)
STACK_TOP = 0x00300000
PAGE = 0x1000
MAX_INSTRUCTIONS = 2_000_000  # a poll that never ends stops here


# Thumb-2 encodings of the barriers (little-endian halfwords): DSB SY and ISB SY.
BARRIERS = {bytes.fromhex("bff34f8f"): "DSB", bytes.fromhex("bff36f8f"): "ISB"}


class UnknownRegister(AssertionError):
    pass


@dataclass
class Access:
    kind: str  # "r" or "w"
    name: str
    value: int


@dataclass
class RegisterModel:
    """Registers by address: name and reset value; subclasses add the hardware's reactions in
    ``on_write`` (after the stored value changes) and may compute reads in ``on_read``."""

    registers: dict[int, tuple[str, int]]  # address -> (name, reset value)
    values: dict[str, int] = field(default_factory=dict)
    trace: list[Access] = field(default_factory=list)

    def __post_init__(self):
        self.by_name = {name: address for address, (name, _) in self.registers.items()}
        for name, reset in self.registers.values():
            self.values.setdefault(name, reset)

    def name_of(self, address: int) -> str:
        if address not in self.registers:
            raise UnknownRegister(f"access to {address:#010x}, which is no register this chip's "
                                  f"reference manual documents there (as modelled)")
        return self.registers[address][0]

    def read(self, address: int) -> int:
        name = self.name_of(address)
        value = self.on_read(name) & 0xFFFFFFFF
        self.trace.append(Access("r", name, value))
        return value

    def write(self, address: int, value: int) -> None:
        name = self.name_of(address)
        self.trace.append(Access("w", name, value))
        self.values[name] = value & 0xFFFFFFFF
        self.on_write(name, value & 0xFFFFFFFF)

    def on_read(self, name: str) -> int:
        return self.values[name]

    def on_write(self, name: str, value: int) -> None:
        pass

    # --- helpers for tests -------------------------------------------------------------------
    def field(self, name: str, lsb: int, width: int) -> int:
        return (self.values[name] >> lsb) & ((1 << width) - 1)

    def writes(self, name: str) -> list[int]:
        return [a.value for a in self.trace if a.kind == "w" and a.name == name]

    def first(self, name: str, kind: str = "w", predicate=lambda value: True) -> int:
        """Index in the trace of the first ``kind`` access to ``name`` whose value satisfies
        ``predicate``; fails if there is none."""
        for i, access in enumerate(self.trace):
            if access.kind == kind and access.name == name and predicate(access.value):
                return i
        raise AssertionError(f"no {'write to' if kind == 'w' else 'read of'} {name} "
                             f"matching the condition; trace: {self.trace}")

    def last(self, name: str, kind: str = "w", predicate=lambda value: True) -> int:
        found = [i for i, a in enumerate(self.trace)
                 if a.kind == kind and a.name == name and predicate(a.value)]
        assert found, f"no {kind} access to {name} matching the condition"
        return found[-1]


def _arm_flags(board: Board) -> list[str]:
    flags = [f"-mcpu={board.core}", "-mthumb"]
    if board.fpu != "none":
        flags += [f"-mfpu={board.fpu}", f"-mfloat-abi={board.float_abi}"]
    return flags


def compile_init(board: Board, folder: Path) -> Path:
    """``mb_board_init`` of ``board``, compiled warning-free and linked at CODE_BASE."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mb_board_config.h").write_text(board_files.board_config_h(board))
    (folder / "mb_board_init.c").write_text(board_files.board_init_c(board))
    elf = folder / "init.elf"
    command = (["arm-none-eabi-gcc"] + _arm_flags(board)
               + ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-ffreestanding", "-nostdlib",
                  "-nostartfiles", f"-Wl,-Ttext={CODE_BASE:#x}", "-Wl,-e,mb_board_init",
                  f"-I{folder}", f"-I{runtime_dir() / 'include'}", str(folder / "mb_board_init.c"),
                  "-o", str(elf)])
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stderr}"
    return elf


def _cpu_model(core: str) -> int:
    return {"cortex-m0plus": arm_const.UC_CPU_ARM_CORTEX_M0,
            "cortex-m4": arm_const.UC_CPU_ARM_CORTEX_M4,
            "cortex-m7": arm_const.UC_CPU_ARM_CORTEX_M7}[core]


def run_init(board: Board, folder: Path, model: RegisterModel) -> RegisterModel:
    """Compile ``board``'s init snippet and run it to its return against ``model``."""
    elf_path = compile_init(board, folder)
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(_cpu_model(board.core))
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        entry = elf.get_section_by_name(".symtab").get_symbol_by_name("mb_board_init")[0]["st_value"]
        uc.mem_map(CODE_BASE, 0x100000)
        for segment in elf.iter_segments():
            if segment["p_type"] == "PT_LOAD" and segment["p_filesz"]:
                uc.mem_write(segment["p_vaddr"], segment.data())
    uc.mem_map(STACK_TOP - 0x10000, 0x10000)

    errors: list[BaseException] = []

    def on_read(_uc, offset, _size, page):
        try:
            return model.read(page + offset)
        except AssertionError as error:
            errors.append(error)
            uc.emu_stop()
            return 0

    def on_write(_uc, offset, _size, value, page):
        try:
            model.write(page + offset, value)
        except AssertionError as error:
            errors.append(error)
            uc.emu_stop()

    for page in sorted({address & ~(PAGE - 1) for address in model.registers}):
        uc.mmio_map(page, PAGE, on_read, page, on_write, page)

    # Barriers are part of what the manuals ask for (cache maintenance), so they go in the trace.
    def on_code(_uc, address, size, _data):
        if size == 4:
            word = bytes(uc.mem_read(address, 4))
            name = BARRIERS.get(word)
            if name:
                model.trace.append(Access("b", name, 0))

    uc.hook_add(unicorn.UC_HOOK_CODE, on_code)

    return_address = CODE_BASE + 0x80000  # mapped, never executed: the run stops on reaching it
    uc.reg_write(arm_const.UC_ARM_REG_SP, STACK_TOP)
    uc.reg_write(arm_const.UC_ARM_REG_LR, return_address | 1)
    try:
        uc.emu_start(entry | 1, return_address, count=MAX_INSTRUCTIONS)
    except unicorn.UcError as error:
        pc = uc.reg_read(arm_const.UC_ARM_REG_PC)
        raise AssertionError(f"{board.name}: the init snippet faulted at pc={pc:#x}: {error} "
                             f"(an access outside the modelled registers?); trace so far: "
                             f"{model.trace[-5:]}") from None
    if errors:
        raise errors[0]
    pc = uc.reg_read(arm_const.UC_ARM_REG_PC)
    assert pc == return_address, (
        f"{board.name}: the init snippet did not return within {MAX_INSTRUCTIONS} instructions "
        f"(polling a flag the register model never sets?); last accesses: {model.trace[-4:]}")
    return model
