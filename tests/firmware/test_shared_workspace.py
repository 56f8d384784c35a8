"""Several models in one firmware share one workspace, the size of the largest (the executors run
one model at a time), unless a model is built with a workspace of its own: run in QEMU
bit-exact with TFLM, the fit report counting the shared workspace once, the opt-out giving the
sum, from the API and the CLI, for the AOT and the RPC executor."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.cli import main
from microbuild.errors import MicrobuildError

REPO = Path(__file__).resolve().parents[2]
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"
AE = REPO / "tests" / "models" / "anomaly_ae.tflite"
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm  # noqa: E402

BOARD = "mps2-an500"
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                                or shutil.which("arm-none-eabi-gcc") is None,
                                reason="qemu-system-arm or arm-none-eabi-gcc is not installed")


def _workspaces(build) -> dict[str, int]:
    return {m["prefix"]: m["workspace_bytes"] for m in build.models}


def _assert_bit_exact(build, result) -> None:
    for prefix, model in (("ds_cnn", DS_CNN), ("anomaly_ae", AE)):
        want = run_tflm(model, build.inputs(prefix))
        got = result.outputs[prefix]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, np.asarray(b).reshape(a.shape))


@needs_qemu
def test_two_models_share_one_workspace_and_run_bit_exact_in_qemu(tmp_path):
    build = api.build_firmware(BOARD, [DS_CNN, AE], tmp_path / "fw")
    sizes = _workspaces(build)
    assert sizes["ds_cnn"] > sizes["anomaly_ae"] > 0
    # The fit report counts one workspace: the largest, not the sum.
    assert build.size["totals"]["workspace"] == max(sizes.values())
    assert build.size["workspaces"] == [{"models": ["ds_cnn", "anomaly_ae"], "shared": True,
                                         "bytes": max(sizes.values()),
                                         "separate_bytes": sum(sizes.values())}]
    sram = next(r for r in build.size["regions"] if r["name"] == "sram")
    assert [c["bytes"] for c in sram["contributions"]
            if c["category"] == "workspace"] == [max(sizes.values())]
    notes = [row[4] for row in build.size_rows]
    assert any("shared by ds_cnn, anomaly_ae" in note for note in notes), notes
    # The second model runs in the bytes the first one used: both still equal TFLM.
    _assert_bit_exact(build, api.run_firmware(build))


@needs_qemu
def test_a_model_with_its_own_workspace_from_the_cli_costs_the_sum(tmp_path, capsys):
    code = main(["build", "--board", BOARD, "--model", str(DS_CNN), "--model", str(AE),
                 "-o", str(tmp_path / "fw"), "--separate-workspace", "anomaly_ae", "--run",
                 "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    sizes = {m["prefix"]: m["workspace_bytes"] for m in document["models"]}
    assert document["size"]["totals"]["workspace"] == sum(sizes.values())
    assert [w["shared"] for w in document["size"]["workspaces"]] == [False, False]
    assert {k: m["status"] for k, m in document["run"]["models"].items()} == {
        "ds_cnn": 0, "anomaly_ae": 0}
    build = api.build_firmware(BOARD, [DS_CNN, AE], tmp_path / "fw",
                               separate_workspace=["anomaly_ae"])  # incremental: the same
    _assert_bit_exact(build, api.run_firmware(build))


def test_sharing_on_the_host_counts_the_workspace_once(tmp_path):
    shared = api.build_firmware("host", [DS_CNN, AE], tmp_path / "shared")
    sizes = _workspaces(shared)
    assert shared.size["totals"]["workspace"] == max(sizes.values())
    separate = api.build_firmware("host", [DS_CNN, AE], tmp_path / "separate",
                                  separate_workspace=True)
    assert separate.size["totals"]["workspace"] == sum(sizes.values())
    _assert_bit_exact(shared, api.run_firmware(shared))


def test_a_separate_workspace_for_a_model_not_in_the_firmware_is_a_clear_error(tmp_path):
    with pytest.raises(MicrobuildError) as err:
        api.build_firmware("host", [DS_CNN, AE], tmp_path / "fw", separate_workspace=["kws"])
    assert "kws" in str(err.value) and "ds_cnn, anomaly_ae" in str(err.value)


@needs_qemu
def test_rpc_models_share_the_arena_workspace(tmp_path):
    from compiler_support import random_inputs

    build = api.build_firmware(BOARD, [DS_CNN, AE], tmp_path / "rpc", executor="rpc")
    arena = build.rpc_description["arena"]
    sizes = _workspaces(build)
    assert arena["workspaces"]["ds_cnn"]["offset"] == arena["workspaces"]["anomaly_ae"]["offset"]
    assert arena["pool_offset"] == (max(sizes.values()) + 15) // 16 * 16
    with api.connect(BOARD, build, timeout=120) as dev:
        for prefix, model in (("ds_cnn", DS_CNN), ("anomaly_ae", AE), ("ds_cnn", DS_CNN)):
            x = random_inputs(model, 1, seed=5)[0]
            for a, b in zip(dev.run(prefix, x), run_tflm(model, x)):
                np.testing.assert_array_equal(a, np.asarray(b).reshape(a.shape))
