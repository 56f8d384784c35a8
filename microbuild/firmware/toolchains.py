"""Compilers and flags for a board, derived from its YAML (`cpu:` and `toolchain:`).

One class per toolchain family. Each says which programs it runs, the flags that select the CPU,
FPU and C library, and which Debian package provides each program, so a missing compiler is an
error that names the package to install instead of a "command not found" from deep in a build.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from microbuild.boards import Board, Toolchain
from microbuild.errors import BoardError, ToolchainError

PICOLIBC_ARM = Path("/usr/lib/picolibc/arm-none-eabi")

# Flags every firmware build uses: sections per function/object so --gc-sections drops what the
# model does not call (all kernels are in the runtime library; a model links only its own).
COMMON_CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-ffunction-sections", "-fdata-sections"]

# clang's target triple per Arm architecture; "hf" when the float ABI is hard.
_CLANG_ARM_TRIPLES = {
    "armv6-m": "thumbv6m-none-eabi",
    "armv7-m": "thumbv7m-none-eabi",
    "armv7e-m": "thumbv7em-none-eabi",
    "armv8-m.main": "thumbv8m.main-none-eabi",
    "armv8.1-m.main": "thumbv8.1m.main-none-eabi",
}


# The runtime/-relative start-up sources each family links (ToolchainSetup.startup), here so that
# what a firmware needs can be listed without the compiler installed (project generators). With
# newlib or picolibc, libc_syscalls.c puts stdio on the console (linked as an object, since the C
# library that refers to it comes after the runtime library on the link line).
STARTUP_SOURCES: dict[str, tuple[str, ...]] = {
    "gcc-arm-none-eabi": ("startup/cortex_m.c", "startup/libc_syscalls.c"),
    "clang": ("startup/cortex_m.c", "startup/libc_syscalls.c"),
    "gcc-riscv-elf": ("startup/riscv32.S", "startup/libc_syscalls.c"),
    "avr-gcc": ("startup/avr.c",),
    "host-gcc": (),
    "host-clang": (),
}

# C++ for microcontrollers: no exceptions, no RTTI and no thread-safe statics (each would pull in
# run-time support from libstdc++/libsupc++, which Debian ships for none of the bare-metal
# toolchains); static destructors are never run (main's return value goes straight to mb_exit),
# so runtime/startup/cxx_abi.c gives them a no-op __cxa_atexit. The host gets plain C++17.
MCU_CXXFLAGS = ["-std=c++17", "-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics"]
HOST_CXXFLAGS = ["-std=c++17"]
# Linked into a bare-metal firmware that has C++ sources (see MCU_CXXFLAGS).
CXX_SUPPORT_SOURCES = ("startup/cxx_abi.c",)


@dataclass
class ToolchainSetup:
    """Everything SCons needs to compile and link for one board with one toolchain."""

    family: str
    cc: str
    ar: str
    ranlib: str
    objcopy: str | None  # None on the host: no .bin/.hex there
    cflags: list[str]
    asflags: list[str]
    linkflags: list[str]
    libs: list[str] = field(default_factory=list)  # library names or absolute paths of archives
    # Libraries linked by name (-l) after everything else: the C library's libm, for the
    # float32 kernels' expf/tanhf/logf (TFLM's std::exp and friends are the same functions).
    system_libs: list[str] = field(default_factory=lambda: ["m"])
    startup: list[str] = field(default_factory=list)  # runtime/-relative start-up sources
    uses_linker_script: bool = True
    # With uses_linker_script False: the toolchain's own default linker script is kept, and
    # microbuild only adds its sections to it (linker_script.default_script_additions, passed
    # with -T and inserted by `INSERT AFTER`): the model workspaces and the stack and heap
    # reservations, so the fit report sees them. None: nothing added (the host).
    insert_after: str | None = None
    cppdefines: list[str] = field(default_factory=list)  # e.g. "MB_WEIGHTS_ATTR=" (empty)
    objcopy_flags: list[str] = field(default_factory=list)  # for the .bin and .hex images
    # Link flags that lift the toolchain's own memory limits, for the relink that measures an
    # over-full firmware (scons_fit.link_with_fit_check): its generated script is widened, but
    # limits that come from elsewhere (avr-libc's crt) need these.
    unbounded_link_flags: list[str] = field(default_factory=list)
    # The largest single object (array) the compiler accepts, when the target limits it below
    # what any board's memory could hold (16-bit AVR: 32767 bytes); None: no such limit.
    max_object_bytes: int | None = None
    # The C++ compiler of the same family (the program's name: looked up only when a firmware
    # has C++ sources, see require_cxx), the Debian package that has it, and C++-only flags.
    cxx: str | None = None
    cxx_package: str = ""
    cxxflags: list[str] = field(default_factory=list)

    @property
    def is_host(self) -> bool:
        return self.family.startswith("host-")

    def require_cxx(self) -> str:
        """The C++ compiler's path, or a ToolchainError naming the package to install."""
        found = shutil.which(self.cxx) if self.cxx else None
        if found is None:
            raise ToolchainError(
                f"C++ sources need {self.cxx or 'a C++ compiler'} for {self.family}, which is "
                f"not installed; install it with: sudo apt-get install {self.cxx_package}")
        return found

    def as_scons(self) -> dict:
        """Construction variables for an SCons environment. The language standard (-std=) is a
        C-only flag (CFLAGS), so that CCFLAGS also serve C++ sources."""
        common = [f for f in self.cflags if not f.startswith("-std=")]
        c_only = [f for f in self.cflags if f.startswith("-std=")]
        return {"CC": self.cc, "AS": self.cc, "AR": self.ar, "RANLIB": self.ranlib,
                "LINK": self.cc, "CCFLAGS": common, "ASFLAGS": list(self.asflags),
                "ASPPFLAGS": list(self.asflags), "LINKFLAGS": list(self.linkflags),
                "CFLAGS": c_only, "CPPDEFINES": list(self.cppdefines),
                "CXX": self.cxx or "c++", "CXXFLAGS": list(self.cxxflags),
                "OBJCOPY": self.objcopy or "objcopy", "OBJCOPYFLAGS": list(self.objcopy_flags)}


def _arm_cpu_flags(board: Board) -> list[str]:
    flags = [f"-mcpu={board.core}", "-mthumb"]
    if board.fpu in ("none",):
        flags.append("-mfloat-abi=soft")
    elif board.fpu == "auto":
        flags.append(f"-mfloat-abi={board.float_abi}")
    else:
        flags += [f"-mfpu={board.fpu}", f"-mfloat-abi={board.float_abi}"]
    return flags


def _require(program: str, package: str, board: Board, family: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise ToolchainError(
            f"board '{board.name}' builds with {family}, but '{program}' is not installed; "
            f"install it with: sudo apt-get install {package}")
    return path


@functools.lru_cache(maxsize=None)
def _gcc_query(gcc: str, *args: str) -> str:
    result = subprocess.run([gcc, *args], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else ""


class _Family:
    name = ""

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        raise NotImplementedError


class GccArmNoneEabi(_Family):
    """arm-none-eabi-gcc with newlib-nano (default), newlib or picolibc."""

    name = "gcc-arm-none-eabi"

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        prefix = tc.prefix or "arm-none-eabi-"
        cc = _require(f"{prefix}gcc", "gcc-arm-none-eabi", board, self.name)
        cpu = _arm_cpu_flags(board)
        specs = _libc_specs(tc.libc, board, prefix, cc, cpu)
        return ToolchainSetup(
            family=self.name, cc=cc, ar=f"{prefix}ar", ranlib=f"{prefix}ranlib",
            objcopy=f"{prefix}objcopy",
            cxx=f"{prefix}g++", cxx_package="gcc-arm-none-eabi", cxxflags=list(MCU_CXXFLAGS),
            cflags=cpu + specs + COMMON_CFLAGS + list(tc.cflags),
            asflags=cpu + specs,
            linkflags=cpu + specs + ["-nostartfiles", "-Wl,--gc-sections"] + list(tc.ldflags),
            startup=list(STARTUP_SOURCES[self.name]))


class GccRiscvElf(_Family):
    """riscv64-unknown-elf-gcc for RV32 (the board's cflags pick -march/-mabi) with picolibc."""

    name = "gcc-riscv-elf"

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        prefix = tc.prefix or "riscv64-unknown-elf-"
        cc = _require(f"{prefix}gcc", "gcc-riscv64-unknown-elf", board, self.name)
        march = [f for f in tc.cflags if f.startswith(("-march=", "-mabi=", "-misa-spec="))]
        specs = _libc_specs(tc.libc, board, prefix, cc, march)
        return ToolchainSetup(
            family=self.name, cc=cc, ar=f"{prefix}ar", ranlib=f"{prefix}ranlib",
            objcopy=f"{prefix}objcopy",
            cxx=f"{prefix}g++", cxx_package="gcc-riscv64-unknown-elf", cxxflags=list(MCU_CXXFLAGS),
            cflags=specs + COMMON_CFLAGS + list(tc.cflags),
            asflags=march + specs,
            # Boards like QEMU virt keep code and data in one rwx RAM region, which is intended.
            linkflags=specs + ["-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments"]
            + list(tc.ldflags),
            startup=list(STARTUP_SOURCES[self.name]))


class ClangArm(_Family):
    """clang + lld for Cortex-M with picolibc; compiler helpers (64-bit division etc.) come from
    the arm-none-eabi-gcc libgcc of the same multilib, as Debian ships no bare-metal
    compiler-rt."""

    name = "clang"

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        if board.arch not in _CLANG_ARM_TRIPLES:
            raise ToolchainError(
                f"board '{board.name}': microbuild builds with clang for Cortex-M only, not "
                f"{board.arch}; use the board's gcc toolchain")
        if tc.libc != "picolibc":
            raise ToolchainError(
                f"board '{board.name}': clang for Cortex-M needs libc: picolibc (Debian ships "
                f"newlib for GCC only), not {tc.libc}")
        cc = _require(f"{tc.prefix}clang", "clang", board, self.name)
        _require("ld.lld", "lld", board, self.name)
        gcc = _require("arm-none-eabi-gcc", "gcc-arm-none-eabi", board, self.name)
        triple = _CLANG_ARM_TRIPLES[board.arch] + ("hf" if board.float_abi == "hard" else "")
        gcc_cpu = _arm_cpu_flags(board)
        cpu = [f"--target={triple}"] + [f for f in gcc_cpu if f != "-mthumb"]
        if not (PICOLIBC_ARM / "include").is_dir():
            raise ToolchainError(f"board '{board.name}' with clang needs picolibc's headers in "
                                 f"{PICOLIBC_ARM}; install: sudo apt-get install picolibc-arm-none-eabi")
        resource = _gcc_query(cc, "-print-resource-dir")
        includes = ["-nostdinc", "-isystem", str(PICOLIBC_ARM / "include"),
                    "-isystem", f"{resource}/include"]
        multilib = _gcc_query(gcc, "--specs=picolibc.specs", *gcc_cpu, "-print-multi-directory")
        libc = PICOLIBC_ARM / "lib" / multilib / "libc.a"
        libgcc = Path(_gcc_query(gcc, *gcc_cpu, "-print-libgcc-file-name"))
        for archive, package in ((libc, "picolibc-arm-none-eabi"), (libgcc, "gcc-arm-none-eabi")):
            if not archive.is_file():
                raise ToolchainError(f"board '{board.name}' with clang needs {archive}; "
                                     f"install: sudo apt-get install {package}")
        return ToolchainSetup(
            family=self.name, cc=cc, ar="llvm-ar" if shutil.which("llvm-ar") else "arm-none-eabi-ar",
            ranlib="llvm-ranlib" if shutil.which("llvm-ranlib") else "arm-none-eabi-ranlib",
            objcopy="llvm-objcopy" if shutil.which("llvm-objcopy") else "arm-none-eabi-objcopy",
            cxx=f"{tc.prefix}clang++", cxx_package="clang", cxxflags=list(MCU_CXXFLAGS),
            cflags=cpu + includes + COMMON_CFLAGS + list(tc.cflags),
            asflags=cpu,
            linkflags=cpu + ["-fuse-ld=lld", "-nostdlib", "-Wl,--gc-sections"] + list(tc.ldflags),
            libs=[str(libc), str(libgcc)],  # picolibc's libc.a has the math functions
            system_libs=[],
            startup=list(STARTUP_SOURCES[self.name]))


class HostCompiler(_Family):
    """The build machine's gcc or clang: an ordinary process, the C library's own start-up."""

    def __init__(self, name: str, program: str, package: str, cxx_program: str,
                 cxx_package: str):
        self.name, self.program, self.package = name, program, package
        self.cxx_program, self.cxx_package = cxx_program, cxx_package

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        cc = _require(f"{tc.prefix}{self.program}", self.package, board, self.name)
        return ToolchainSetup(
            family=self.name, cc=cc, ar="ar", ranlib="ranlib", objcopy=None,
            cxx=f"{tc.prefix}{self.cxx_program}", cxx_package=self.cxx_package,
            cxxflags=list(HOST_CXXFLAGS),
            cflags=COMMON_CFLAGS + list(tc.cflags), asflags=[],
            linkflags=["-Wl,--gc-sections"] + list(tc.ldflags), uses_linker_script=False)


class AvrGcc(_Family):
    """avr-gcc with avr-libc for 8-bit AVR (``-mmcu=`` is the board's cpu.core, e.g. atmega328p).

    avr-libc's own start-up (crt<mcu>.o: vector table, stack pointer, .data copy, .bss clear)
    and avr-ld's default linker script are used, not microbuild's: AVR is a Harvard machine, and
    GNU ld sees its two address spaces as one by putting data memory at 0x800000 + the data
    address. The default script (selected by -mmcu) already puts .text at 0 in flash and .data
    (load image in flash), .bss and .noinit at the device's RAM start (0x800100 on the
    ATmega328P), defines the symbols the crt copies and clears with, and keeps the .initN/.finiN
    sections the crt is made of; a generated MEMORY/SECTIONS script would have to redo all of
    that. microbuild only inserts its own sections after .noinit (see insert_after).

    The default script's MEMORY lengths are symbols (__TEXT_REGION_LENGTH__, ...) that
    crt<mcu>.o defines weakly for the chip (32 KiB of text, 2 KiB of data from 0x800100 for the
    ATmega328P; `avr-ld --verbose` alone shows the avr5 maxima), so ld itself refuses a firmware
    too big for the chip. The fit check then relinks with those symbols widened
    (unbounded_link_flags) and explains the overflow against the board's memory map; a firmware
    within the chip's limits but not the board's (a bootloader's share, say) is caught by the fit
    report of the linked ELF.

    Three things differ from the 32-bit boards:
    - mb_board_init runs from .init8 and main's return reaches mb_exit from .fini8
      (runtime/startup/avr.c, linked as an object: no reset handler of ours);
    - `const` data is read through data-space pointers (a plain `const` array is not readable
      from flash without PROGMEM and lpm, which the kernels do not use), so avr-ld's script
      puts .rodata into .data and the crt copies it to RAM. The weights must go the same way:
      MB_WEIGHTS_ATTR is defined empty so they are ordinary .rodata, because a section of their
      own (.mb_weights) would be an orphan that avr-ld places in flash address space while the
      code reads it at a RAM address. On AVR the weights live in RAM (counted as data).
    - `int` is 16 bits, and one object is at most 32767 bytes (PTRDIFF_MAX).
    """

    name = "avr-gcc"
    PACKAGES = "gcc-avr avr-libc"
    # avr-gcc rejects ("size of array is too large") any object bigger than PTRDIFF_MAX.
    MAX_OBJECT_BYTES = 32767

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        prefix = tc.prefix or "avr-"
        cc = _require(f"{prefix}gcc", self.PACKAGES, board, self.name)
        if tc.libc != "avr-libc":
            raise ToolchainError(f"board '{board.name}': avr-gcc builds with libc: avr-libc, "
                                 f"not {tc.libc}")
        mcu = [f"-mmcu={board.core}"]
        crt = _gcc_query(cc, *mcu, f"-print-file-name=crt{board.core}.o")
        if not crt.startswith("/"):
            raise ToolchainError(
                f"board '{board.name}' (cpu.core {board.core}) needs avr-libc's start-up file "
                f"crt{board.core}.o, which is not installed (or {board.core} is not an AVR "
                f"device avr-gcc knows); install it with: sudo apt-get install {self.PACKAGES}")
        for kind in ("rodata", "weights"):
            region = board.region_for(kind)
            if region is not None and not region.writable:
                raise BoardError(
                    f"board '{board.name}': memory.placement.{kind} is '{region.name}', which is "
                    f"not RAM; with avr-gcc, constants and model weights are read through RAM "
                    f"pointers, so avr-libc copies them to RAM at boot: place {kind} in the RAM "
                    f"region")
        return ToolchainSetup(
            family=self.name, cc=cc, ar=f"{prefix}ar", ranlib=f"{prefix}ranlib",
            objcopy=f"{prefix}objcopy",
            cxx=f"{prefix}g++", cxx_package="gcc-avr", cxxflags=list(MCU_CXXFLAGS),
            cflags=mcu + COMMON_CFLAGS + list(tc.cflags),
            asflags=mcu,
            linkflags=mcu + ["-Wl,--gc-sections"] + list(tc.ldflags),
            startup=list(STARTUP_SOURCES[self.name]),
            uses_linker_script=False, insert_after=".noinit",
            cppdefines=["MB_WEIGHTS_ATTR="],
            # Only what goes into flash: .text and the load image of .data (not .eeprom or
            # fuse sections avr-libc programs may carry).
            objcopy_flags=["-j", ".text", "-j", ".data"],
            # Text up to the start of data space, data up to 16 MiB: --defsym overrides the
            # crt's weak definitions.
            unbounded_link_flags=["-Wl,--defsym=__TEXT_REGION_LENGTH__=0x800000",
                                  "-Wl,--defsym=__DATA_REGION_LENGTH__=0x7fff00"],
            max_object_bytes=self.MAX_OBJECT_BYTES)


def _libc_specs(libc: str, board: Board, prefix: str, cc: str, cpu: list[str]) -> list[str]:
    """GCC spec files that select the C library (headers at compile time, archives at link)."""
    target = prefix.rstrip("-")
    if libc == "newlib-nano":
        if not _gcc_query(cc, *cpu, "--specs=nano.specs", "-print-file-name=libc_nano.a") \
                .startswith("/"):
            raise ToolchainError(f"board '{board.name}' links newlib-nano, which is not installed; "
                                 f"install: sudo apt-get install libnewlib-{target}")
        return ["--specs=nano.specs"]
    if libc == "newlib":
        return []
    if libc == "picolibc":
        if not _gcc_query(cc, "-print-file-name=picolibc.specs").startswith("/"):
            package = "picolibc-riscv64-unknown-elf" if "riscv" in target else f"picolibc-{target}"
            raise ToolchainError(f"board '{board.name}' links picolibc, which is not installed; "
                                 f"install: sudo apt-get install {package}")
        return ["--specs=picolibc.specs"]
    if libc == "none":
        return ["-nostdlib"]
    raise ToolchainError(f"board '{board.name}': C library '{libc}' does not go with {target}-gcc")


FAMILIES: dict[str, _Family] = {
    f.name: f for f in (GccArmNoneEabi(), GccRiscvElf(), ClangArm(),
                        AvrGcc(), HostCompiler("host-gcc", "gcc", "gcc", "g++", "g++"),
                        HostCompiler("host-clang", "clang", "clang", "clang++", "clang"))
}


# The Debian/Ubuntu packages a fresh machine installs to build with each family: the compilers,
# binutils and every C library the family's boards may pick (the messages above name the one
# package a missing program comes from). microbuild.ci.emit installs these on CI runners.
# avr-gcc is listed though microbuild does not build for it yet: board files may already name it.
# The host families add libc6-dev, which plain Debian images lack (gcc only recommends it).
DEBIAN_PACKAGES: dict[str, tuple[str, ...]] = {
    "gcc-arm-none-eabi": ("gcc-arm-none-eabi", "libnewlib-arm-none-eabi",
                          "picolibc-arm-none-eabi"),
    "clang": ("clang", "lld", "gcc-arm-none-eabi", "picolibc-arm-none-eabi"),
    "gcc-riscv-elf": ("gcc-riscv64-unknown-elf", "picolibc-riscv64-unknown-elf"),
    "host-gcc": ("gcc", "libc6-dev"),
    "host-clang": ("clang", "libc6-dev"),
    "avr-gcc": ("gcc-avr", "avr-libc"),
}


def debian_packages(family: str) -> tuple[str, ...]:
    """The Debian packages to install to build with toolchain ``family``."""
    try:
        return DEBIAN_PACKAGES[family]
    except KeyError:
        raise ToolchainError(f"toolchain '{family}' is unknown; known: "
                             f"{', '.join(DEBIAN_PACKAGES)}") from None


def select_toolchain(board: Board, family: str | None = None) -> Toolchain:
    """The board's default toolchain, or the one of its toolchains with ``family``."""
    if family is None:
        return board.toolchain
    for tc in board.toolchains:
        if tc.family == family:
            return tc
    listed = ", ".join(tc.family for tc in board.toolchains)
    raise ToolchainError(f"board '{board.name}' does not list toolchain '{family}'; it lists: "
                         f"{listed} (add it under toolchain.alternatives in the board YAML)")


def toolchain_setup(board: Board, family: str | None = None) -> ToolchainSetup:
    """Programs and flags to build for ``board`` with its default toolchain or ``family``."""
    tc = select_toolchain(board, family)
    if tc.family not in FAMILIES:
        raise ToolchainError(f"board '{board.name}': toolchain '{tc.family}' is not supported by "
                             f"microbuild's firmware build yet")
    return FAMILIES[tc.family].setup(board, tc)


def startup_sources(board: Board, family: str | None = None) -> list[str]:
    """The start-up sources (relative to runtime/) a firmware for ``board`` links with its default
    toolchain or ``family``; unlike toolchain_setup, this needs no compiler installed."""
    tc = select_toolchain(board, family)
    if tc.family not in STARTUP_SOURCES:
        raise ToolchainError(f"board '{board.name}': toolchain '{tc.family}' is not supported by "
                             f"microbuild's firmware build yet")
    return list(STARTUP_SOURCES[tc.family])
