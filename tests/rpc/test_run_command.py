"""`microbuild run` and `microbuild flash` as a user types them: the DS-CNN test model driven from
the host on the emulated boards and the host, outputs bit-identical to TFLM's and a per-operator
profile that adds up to the whole-model timed run; flashing a real board that is not attached."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import cli
from microbuild.compiler import compile_model
from microbuild.tensor_files import random_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

DS_CNN = Path(__file__).resolve().parent.parent / "models" / "ds_cnn.tflite"


@pytest.mark.parametrize("board", ["host", "mps2-an500", "mps2-an385", "mps3-an547",
                                   "riscv32-virt"])
def test_run_profile_is_bit_exact_and_adds_up(board, tmp_path, capsys):
    status = cli.main(["run", "--board", board, "--model", str(DS_CNN), "--profile",
                       "--repeat", "5" if board.startswith("host") else "1", "--seed", "4",
                       "--json", "-o", str(tmp_path / "fw"), "--output", str(tmp_path / "y.npy")])
    document = json.loads(capsys.readouterr().out)
    assert status == 0
    (model,) = document["models"]
    x = random_inputs(compile_model(DS_CNN, prefix="ds_cnn").inputs, 4)
    want = run_tflm(DS_CNN, x)[0]
    np.testing.assert_array_equal(np.array(model["outputs"][0], dtype=np.int8), want)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)
    profile = model["profile"]
    assert len(profile["ops"]) == 12
    # Under -icount shift=0 the emulator's timings repeat to the tick, so the operators' sum must
    # match the whole-model run to 0.5 %: that is where a missed or doubly counted operator shows.
    # The host's ticks are wall-clock time on a loaded machine: nothing is asserted on them.
    if board == "host":
        assert profile["op_ticks"] > 0 and profile["model_ticks"] > 0
    else:
        assert abs(profile["op_ticks"] / profile["model_ticks"] - 1) <= 0.005, profile


def test_run_prints_outputs_and_the_operator_table(tmp_path, capsys):
    x = random_inputs(compile_model(DS_CNN, prefix="ds_cnn").inputs, 9)[0]
    np.save(tmp_path / "x.npy", x)
    status = cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--input",
                       str(tmp_path / "x.npy"), "--profile", "-o", str(tmp_path / "fw")])
    text = capsys.readouterr().out
    assert status == 0
    want = run_tflm(DS_CNN, [x])[0].reshape(-1)
    assert " ".join(str(v) for v in want) in text
    for needle in ("DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "sum of operators",
                   "whole model (RUN)", "timer ticks per inference"):
        assert needle in text


def test_run_with_the_aot_executor(tmp_path, capsys):
    status = cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--executor", "aot",
                       "--seed", "4", "--json", "-o", str(tmp_path / "fw")])
    document = json.loads(capsys.readouterr().out)
    assert status == 0 and document["executor"] == "aot"
    x = random_inputs(compile_model(DS_CNN, prefix="ds_cnn").inputs, 4)
    (output,) = document["run"]["models"]["ds_cnn"]["outputs"]
    assert output["values"] == run_tflm(DS_CNN, x)[0].reshape(-1).tolist()


def test_user_mistakes_are_one_line_errors(tmp_path, capsys):
    assert cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--executor", "aot",
                     "--profile", "-o", str(tmp_path)]) != 0
    assert "needs --executor rpc" in capsys.readouterr().err
    np.save(tmp_path / "bad.npy", np.zeros((3,), np.float32))
    assert cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--input",
                     str(tmp_path / "bad.npy"), "-o", str(tmp_path / "fw")]) != 0
    err = capsys.readouterr().err
    assert "dtype is float32" in err and "Traceback" not in err
    assert cli.main(["flash", "--board", "mps2-an500", "--firmware", str(DS_CNN)]) != 0
    assert "nothing to flash" in capsys.readouterr().err


@pytest.mark.parametrize("runner,tool_says", [("stlink", "Couldn't find any ST-Link"),
                                              ("openocd", "open failed")])
def test_flash_a_board_that_is_not_attached(runner, tool_says, tmp_path, capsys):
    # The real st-flash / openocd run, and find no probe on this machine.
    status = cli.main(["flash", "--board", "stm32f746", "--model", str(DS_CNN), "--runner",
                       runner, "-o", str(tmp_path / "fw")])
    err = capsys.readouterr().err
    assert status != 0
    assert f"runner {runner}" in err and "no probe found" in err
    assert "ST-LINK (USB 0483:374b)" in err  # the probe it looked for
    assert tool_says in err and "exit code:" in err  # the tool's own output and status
    assert "Traceback" not in err


TINY_FC = DS_CNN.parent / "tiny_fc.tflite"


@pytest.mark.parametrize("executor,board", [("rpc", "host"), ("aot", "mps2-an500")])
def test_several_models_take_and_give_one_npz_keyed_by_model(executor, board, tmp_path, capsys):
    """Two models in one firmware: --input is one .npz keyed <model>.input<k> (the names the
    firmware's own embedded-input file uses), --output one .npz keyed <model>.output<k>."""
    models = {"ds_cnn": DS_CNN, "tiny_fc": TINY_FC}
    inputs = {name: random_inputs(compile_model(path, prefix=name).inputs, 30 + k)
              for k, (name, path) in enumerate(models.items())}
    np.savez(tmp_path / "x.npz", **{f"{name}.input{k}": a for name, arrays in inputs.items()
                                    for k, a in enumerate(arrays)})
    command = ["run", "--board", board, "--executor", executor, "--input",
               str(tmp_path / "x.npz"), "--output", str(tmp_path / "y.npz"),
               "-o", str(tmp_path / "fw")]
    for path in models.values():
        command += ["--model", str(path)]
    assert cli.main(command) == 0, capsys.readouterr().err
    with np.load(tmp_path / "y.npz") as saved:
        assert sorted(saved.files) == ["ds_cnn.output0", "tiny_fc.output0"]
        for name, path in models.items():
            want = run_tflm(path, inputs[name])[0]
            np.testing.assert_array_equal(saved[f"{name}.output0"].reshape(want.shape), want)


def test_a_several_model_npz_missing_a_model_says_which_key(tmp_path, capsys):
    x = random_inputs(compile_model(DS_CNN, prefix="ds_cnn").inputs, 1)
    np.savez(tmp_path / "x.npz", **{"ds_cnn.input0": x[0]})
    status = cli.main(["run", "--board", "host", "--model", str(DS_CNN), "--model", str(TINY_FC),
                       "--input", str(tmp_path / "x.npz"), "-o", str(tmp_path / "fw")])
    assert status != 0
    assert "key it 'tiny_fc.input0'" in " ".join(capsys.readouterr().err.split())
