"""A generated project with two models: they share one workspace (the size of the larger) and
both print TFLM's outputs, built with the project's own make on the host and in QEMU."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.variants import Selection, Target
from microbuild.device.aot_output import parse_aot_output
from microbuild.device.runners import runner_for
from microbuild.project import build_project, generate_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import DS_CNN, MODELS, reference  # noqa: E402

AE = MODELS / "anomaly_ae.tflite"


@pytest.mark.parametrize("board", ["host", "mps2-an500"])
def test_two_models_in_a_make_project_share_one_workspace(board, tmp_path):
    if board != "host" and shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed")
    project = tmp_path / "p"
    generate_project(board, [DS_CNN, AE], "make", project)
    # SELF_TEST=1 (make takes it from the environment): the self-test runs both models on
    # their embedded inputs; the application skeleton would not link their AOT table.
    build_project(project, env={**os.environ, "SELF_TEST": "1"})
    firmware = project / "build" / ("firmware" if board == "host" else "firmware.elf")
    selection = Selection(Target.of_board(load_board(board)))  # the kernels the build chose
    summaries = [compile_model(m, prefix=p, selection=selection).summary()
                 for p, m in (("ds_cnn", DS_CNN), ("anomaly_ae", AE))]
    # One workspace array, the size of the larger model's.
    assert _workspace_symbols(board, firmware) == {
        "mb_aot_shared_workspace": max(s["workspace_bytes"] for s in summaries)}
    _run_and_check(board, firmware, summaries)


def _workspace_symbols(board: str, firmware: Path) -> dict[str, int]:
    nm = "nm" if board == "host" else "arm-none-eabi-nm"
    symbols = subprocess.run([nm, "-S", str(firmware)], capture_output=True, text=True,
                             check=True).stdout
    return {m.group(2): int(m.group(1), 16)
            for m in re.finditer(r"^\S+ (\S+) \S (mb_aot_\w*workspace\w*)$", symbols, re.M)}


def _run_and_check(board: str, firmware: Path, summaries: list[dict]) -> None:
    run = runner_for(load_board(board)).run_to_exit(firmware, timeout=120)
    result = parse_aot_output(run.console, summaries, load_board(board), run.status)
    for prefix, model in (("ds_cnn", DS_CNN), ("anomaly_ae", AE)):
        for a, b in zip(result.outputs[prefix], reference(model), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"{board}: {model.name}")


def test_a_model_keeps_its_own_workspace_in_scons_and_platformio_projects(tmp_path, pio):
    """The opt-out reaches the formats that generate the table at build time."""
    summaries = [compile_model(m, prefix=p).summary()
                 for p, m in (("ds_cnn", DS_CNN), ("anomaly_ae", AE))]
    own = {f"mb_aot_workspace_{s['prefix']}": s["workspace_bytes"] for s in summaries}

    scons = tmp_path / "scons"
    generate_project("host", [DS_CNN, AE], "scons", scons, separate_workspace=["anomaly_ae"])
    assert "SEPARATE_WORKSPACE = ['anomaly_ae']" in (scons / "SConstruct").read_text()
    subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", "SELF_TEST=1"], cwd=scons,
                   check=True, capture_output=True, timeout=600)
    assert _workspace_symbols("host", scons / "build" / "firmware") == own
    _run_and_check("host", scons / "build" / "firmware", summaries)

    project = tmp_path / "pio"
    generate_project("host", [DS_CNN, AE], "platformio", project, separate_workspace=True)
    assert "custom_microbuild_separate_workspace = *\n" in \
        (project / "platformio.ini").read_text()
    pio(project, "run", "-e", "host-self-test")
    firmware = project / ".pio" / "build" / "host-self-test" / "firmware"
    assert _workspace_symbols("host", firmware) == own
    _run_and_check("host", firmware, summaries)
