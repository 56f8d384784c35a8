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
from microbuild.errors import ToolchainError

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
    startup: list[str] = field(default_factory=list)  # runtime/-relative start-up sources
    uses_linker_script: bool = True

    def as_scons(self) -> dict:
        """Construction variables for an SCons environment."""
        return {"CC": self.cc, "AS": self.cc, "AR": self.ar, "RANLIB": self.ranlib,
                "LINK": self.cc, "CCFLAGS": list(self.cflags), "ASFLAGS": list(self.asflags),
                "ASPPFLAGS": list(self.asflags), "LINKFLAGS": list(self.linkflags),
                "CFLAGS": [], "CPPDEFINES": [], "OBJCOPY": self.objcopy or "objcopy"}


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
            cflags=cpu + specs + COMMON_CFLAGS + list(tc.cflags),
            asflags=cpu + specs,
            linkflags=cpu + specs + ["-nostartfiles", "-Wl,--gc-sections"] + list(tc.ldflags),
            startup=["startup/cortex_m.c"])


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
            cflags=specs + COMMON_CFLAGS + list(tc.cflags),
            asflags=march + specs,
            # Boards like QEMU virt keep code and data in one rwx RAM region, which is intended.
            linkflags=specs + ["-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments"]
            + list(tc.ldflags),
            startup=["startup/riscv32.S"])


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
            cflags=cpu + includes + COMMON_CFLAGS + list(tc.cflags),
            asflags=cpu,
            linkflags=cpu + ["-fuse-ld=lld", "-nostdlib", "-Wl,--gc-sections"] + list(tc.ldflags),
            libs=[str(libc), str(libgcc)],
            startup=["startup/cortex_m.c"])


class HostCompiler(_Family):
    """The build machine's gcc or clang: an ordinary process, the C library's own start-up."""

    def __init__(self, name: str, program: str, package: str):
        self.name, self.program, self.package = name, program, package

    def setup(self, board: Board, tc: Toolchain) -> ToolchainSetup:
        cc = _require(f"{tc.prefix}{self.program}", self.package, board, self.name)
        return ToolchainSetup(
            family=self.name, cc=cc, ar="ar", ranlib="ranlib", objcopy=None,
            cflags=COMMON_CFLAGS + list(tc.cflags), asflags=[],
            linkflags=["-Wl,--gc-sections"] + list(tc.ldflags), uses_linker_script=False)


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
                        HostCompiler("host-gcc", "gcc", "gcc"),
                        HostCompiler("host-clang", "clang", "clang"))
}


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
