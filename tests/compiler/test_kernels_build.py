"""Every kernel and the C generated for every model compile warning-free (-Wall -Wextra -Werror
-pedantic, C99) for x86-64, Cortex-M (GCC and clang with picolibc) and RV32."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from microbuild.compiler import compile_model
from microbuild.paths import runtime_dir

MODELS = Path(__file__).resolve().parent.parent / "models"
PICOLIBC_ARM = "/usr/lib/picolibc/arm-none-eabi/include"
# clang's own headers (stdint.h's freestanding parts) once -nostdinc drops the host's.
CLANG_RESOURCE = subprocess.run(["clang", "-print-resource-dir"], capture_output=True,
                                text=True).stdout.strip()

TARGETS = {
    "host-gcc": ["gcc"],
    "host-clang": ["clang"],
    "cortex-m0plus-gcc": ["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb"],
    "cortex-m4f-gcc": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16",
                       "-mfloat-abi=hard"],
    "cortex-m7-gcc": ["arm-none-eabi-gcc", "-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16",
                      "-mfloat-abi=hard"],
    "cortex-m55-gcc": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
    "cortex-m4f-clang": ["clang", "--target=thumbv7em-none-eabihf", "-mcpu=cortex-m4",
                         "-mfloat-abi=hard", "-nostdinc", "-isystem", PICOLIBC_ARM, "-isystem",
                         f"{CLANG_RESOURCE}/include"],
    "rv32imac-gcc": ["riscv64-unknown-elf-gcc", "--specs=picolibc.specs", "-march=rv32imac",
                     "-mabi=ilp32"],
}
FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-c"]


def _compile_all(command: list[str], sources: list[Path], includes: list[Path], cwd: Path) -> None:
    result = subprocess.run(command + FLAGS + [f"-I{i}" for i in includes] + [str(s) for s in sources],
                            cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stderr}"
    assert len(list(cwd.glob("*.o"))) == len({s.stem for s in sources})


@pytest.mark.parametrize("target", TARGETS)
def test_every_kernel_compiles(target, tmp_path):
    kernels = sorted((runtime_dir() / "kernels").glob("*.c"))
    assert len(kernels) >= 16  # several operators share a kernel (e.g. LOGISTIC/TANH/HARD_SWISH)
    _compile_all(TARGETS[target], kernels, [runtime_dir() / "include"], tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_generated_model_code_compiles(target, tmp_path):
    models = sorted(MODELS.glob("*.tflite")) + [MODELS / "ops" / "float_io_logistic.tflite"]
    sources = []
    for i, model in enumerate(models):
        out = tmp_path / f"m{i}"
        compiled = compile_model(model, prefix=f"m{i}")
        compiled.write(out)
        sources += [out / name for name in compiled.sources if name.endswith(".c")]
    objects = tmp_path / "obj"
    objects.mkdir()
    _compile_all(TARGETS[target], sources,
                 [runtime_dir() / "include"] + [tmp_path / f"m{i}" for i in range(len(models))], objects)
