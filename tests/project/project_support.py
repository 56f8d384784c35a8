"""Helpers of the project-generator tests (imported as `from project_support import ...`, like
tests/compiler/compiler_support.py): PlatformIO without its registry, the TFLM reference, and
running a built firmware.

PlatformIO cannot reach its registry here (../shared/notes/platformio-offline.md), so `pio run`
gets a core dir seeded in a temporary folder exactly as those notes say: the core package
`tool-scons` as a local package (a package.json and a scons.py that runs the SCons installed in
this venv) linked from <core>/packages/tool-scons.pio-link, an appstate.json that skips the
upgrade check, and the environment variables that keep it from phoning home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import load_board
from microbuild.firmware import aot
from microbuild.compiler import compile_model
from microbuild.device.aot_output import parse_aot_output
from microbuild.device.runners import runner_for
from microbuild.tflm_reference import tflm_outputs

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
TINY_FC = MODELS / "tiny_fc.tflite"
HERE = Path(__file__).resolve().parent


class PlatformIO:
    """`pio` of this venv with an offline core dir."""

    def __init__(self, core: Path):
        self.core = core
        from microbuild.project.platformio_offline import offline_environment

        self.env = offline_environment(core, {
            k: v for k, v in os.environ.items() if not k.startswith(("PLATFORMIO_", "MICROBUILD_"))})

    def __call__(self, project: Path, *args: str, check: bool = True
                 ) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "platformio", *args], cwd=project,
                              env=self.env, capture_output=True, text=True, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"pio {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
        return proc


def offline_platformio(root: Path) -> PlatformIO:
    """`pio` with a core dir in ``root`` seeded the way microbuild does it for users
    (microbuild/project/platformio_offline.py): no network needed."""
    from microbuild.project.platformio_offline import seed_offline_core

    return PlatformIO(seed_offline_core(root / "core"))


_reference_cache: dict[tuple[str, int], list[np.ndarray]] = {}


def reference(model: Path, seed: int = 0) -> list[np.ndarray]:
    """TFLM's outputs for the input a firmware embeds by default (random, seeded)."""
    key = (str(model), seed)
    if key not in _reference_cache:
        summary = compile_model(model, prefix="m").summary()
        (inputs,) = aot.embedded_inputs([summary], {}, seed)
        _reference_cache[key] = tflm_outputs(model, inputs)
    return _reference_cache[key]


def check_outputs(console: str, status: int, board: str, prefix: str, model: Path,
                  seed: int = 0) -> None:
    """The firmware's printed outputs (the `mb-aot` lines) equal TFLM's, bit for bit."""
    summary = compile_model(model, prefix=prefix).summary()
    result = parse_aot_output(console, [summary], load_board(board), status)
    expected = reference(model, seed)
    got = result.outputs[prefix]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b, err_msg=f"{board}: {model.name}")
    assert result.ticks[prefix] > 0


def run_and_check(board: str, firmware: Path, model: Path = DS_CNN, prefix: str = "ds_cnn",
                  seed: int = 0) -> None:
    """Run a built firmware (the host: as a process; mps2-an500: in QEMU) and compare."""
    assert firmware.is_file(), firmware
    run = runner_for(load_board(board)).run_to_exit(firmware, timeout=120)
    check_outputs(run.console, run.status, board, prefix, model, seed)


def text_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def unprivileged(command: list[str]) -> tuple[list[str], dict]:
    """``command`` run as a user who is not root: as `nobody` when the tests run as root (CI),
    else as the user running the tests, who is not root already.

    `nobody` cannot run this venv's interpreter when it lives under /root (pyenv): Python
    commands then run on Debian's python3 of the same minor version with this venv's packages
    and microbuild's checkout on PYTHONPATH, as a user's own venv would provide them."""
    import os
    import site
    import sysconfig

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    if os.geteuid() != 0:
        return command, {**os.environ, **env}
    if command[0] == sys.executable:
        system_python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
        if not os.access(system_python, os.X_OK):
            pytest.skip(f"{system_python} is missing: nothing `nobody` can run Python with")
        import microbuild

        checkout = Path(microbuild.__file__).resolve().parent.parent
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), sysconfig.get_paths()["purelib"],
                                             *site.getsitepackages()])
        command = [system_python, *command[1:]]
    return ["runuser", "-u", "nobody", "--", *command], env


def app_line(model: Path, prefix: str, inputs=None) -> str:
    """What the generated application (src/main.c as written, its read_sensor() filling the
    real value 0, i.e. the zero point, unless ``inputs`` says otherwise) prints for ``model``:
    "<prefix>: top class K score S", K TFLM's top class and S its score dequantized with the
    output's scale and zero point in float32 (as the C code computes it), three decimals."""
    summary = compile_model(model, prefix=prefix).summary()
    if inputs is None:
        inputs = [np.full(spec["shape"], spec["zero_point"], dtype=spec["dtype"])
                  for spec in summary["inputs"]]
    (y, *_) = tflm_outputs(model, inputs)
    out = summary["outputs"][0]
    scores = (np.float32(out["scale"]) * (y.reshape(-1).astype(np.int32) - out["zero_point"])
              .astype(np.float32)).astype(np.float32)
    best = int(np.argmax(scores))
    value = np.float32(scores[best])
    milli = int(np.float32(value * np.float32(1000.0)) + np.float32(0.5 if value >= 0 else -0.5))
    sign = "-" if milli < 0 else ""
    milli = abs(milli)
    return f"{prefix}: top class {best} score {sign}{milli // 1000}.{milli % 1000:03d}"


def check_app(console: str, status: int, model: Path = DS_CNN, prefix: str = "ds_cnn") -> None:
    """The generated application ran and printed TFLM's top class and score."""
    assert status == 0, console
    assert "mb-aot" not in console, console
    assert app_line(model, prefix) + " (" in console, (app_line(model, prefix), console)
