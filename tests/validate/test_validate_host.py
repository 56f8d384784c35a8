"""`microbuild validate` on the host board: bit-exactness with TFLM over a dataset, the float
model's figures, accuracy and confusion matrix against labels, a device error mid-run, Ctrl-C,
and bad data refused before anything is sent to the board."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from validate_support import TINY_FC, shared_model
from microbuild import api
from microbuild.errors import MicrobuildError
from microbuild.tflm_reference import tflm_outputs_many
from microbuild.validate.dataset import DatasetError, dequantize, tensor_specs


def tiny_fc_data(tmp_path, n=24, seed=3):
    x = np.random.default_rng(seed).uniform(-1, 1, (n, 1, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    return tmp_path / "x.npy", x


def test_labels_give_accuracy_and_the_confusion_matrix(tmp_path, host_device,
                                                       host_validate_firmware):
    path, x = tiny_fc_data(tmp_path)
    (spec,) = tensor_specs(TINY_FC)
    quantized = [[np.clip(np.round(s / spec.scale) + spec.zero_point, -128, 127)
                  .astype(np.int8)] for s in x]
    predicted = np.array([int(np.argmax(o[0])) for o in tflm_outputs_many(TINY_FC, quantized)])
    # Every third label is wrong on purpose: the accuracy is then known exactly.
    labels = np.where(np.arange(len(x)) % 3 == 0, (predicted + 1) % 4, predicted)
    np.save(tmp_path / "labels.npy", labels)

    done = []
    report = api.validate("host", TINY_FC, path, labels=tmp_path / "labels.npy",
                          device=host_device, firmware=host_validate_firmware,
                          progress=lambda i, n: done.append((i, n)))
    doc = report.to_dict()
    assert doc["identical_to_tflm"] == doc["ran"] == 24
    assert doc["vs_labels"]["deployed_accuracy"] == pytest.approx(16 / 24)
    confusion = np.zeros((4, 4), int)
    for label, p in zip(labels, predicted):
        confusion[label, p] += 1
    assert doc["vs_labels"]["confusion"] == confusion.tolist()
    assert done[-1] == (24, 24) and len(done) == 24
    assert doc["latency"]["min_ticks"] > 0 and doc["latency"]["kind"] == "wall clock"
    assert doc["memory"]["totals"]["weights"] > 0


def test_float_model_figures_on_hello_world(tmp_path, host_device):
    int8, floating = shared_model("hello_world_int8"), shared_model("hello_world_float")
    x = np.linspace(0, 2 * np.pi, 40, dtype=np.float32).reshape(40, 1, 1)
    np.save(tmp_path / "x.npy", x)
    report = api.validate("host", int8, tmp_path / "x.npy", float_model=floating,
                          device=host_device)
    (out_spec,) = tensor_specs(int8, "outputs")
    (in_spec,) = tensor_specs(int8)
    q = [[np.clip(np.round(v / in_spec.scale) + in_spec.zero_point, -128, 127).astype(np.int8)]
         for v in x]
    deployed = np.array([dequantize(o[0], out_spec) for o in tflm_outputs_many(int8, q)]).ravel()
    reference = np.array([o[0] for o in tflm_outputs_many(floating, [[v] for v in x])]).ravel()
    error = deployed - reference
    (figures,) = report.to_dict()["vs_float"]
    assert report.identical == 40
    assert figures["mean_abs_error"] == pytest.approx(np.abs(error).mean())
    assert figures["max_abs_error"] == pytest.approx(np.abs(error).max())
    assert figures["rmse"] == pytest.approx(np.sqrt((error ** 2).mean()))
    assert figures["snr_db"] == pytest.approx(
        10 * np.log10((reference ** 2).sum() / (error ** 2).sum()))
    assert 0.99 < figures["cosine"] <= 1.0
    assert figures["max_abs_error"] > 0  # int8 costs something: the figures are not trivially 0
    assert sum(figures["abs_error_histogram"]["counts"]) == 40


def test_a_device_error_mid_run_is_reported_by_sample_and_the_run_goes_on(tmp_path, host_device):
    path, _ = tiny_fc_data(tmp_path, n=6)
    real_run = host_device.client.run
    calls = []

    def failing_third_run(index):  # the device answers sample 2 with a kernel's error status
        calls.append(index)
        return (5, 0) if len(calls) == 3 else real_run(index)

    host_device.client.run = failing_third_run
    report = api.validate("host", TINY_FC, path, device=host_device)
    assert [(f.index, f.name) for f in report.failures] == [(2, "x.npy[2]")]
    assert "returned 5 on the device" in report.failures[0].message
    assert report.ran == 5 and report.identical == 5 and not report.interrupted


def test_ctrl_c_keeps_what_was_measured(tmp_path, host_device):
    path, _ = tiny_fc_data(tmp_path, n=10)
    real_run = host_device.client.run
    calls = []

    def interrupted_fifth_run(index):
        calls.append(index)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_run(index)

    host_device.client.run = interrupted_fifth_run
    report = api.validate("host", TINY_FC, path, device=host_device)
    assert report.interrupted and report.ran == 4 and report.identical == 4
    assert report.to_dict()["samples"] == 10


def _bad_image_folder(tmp_path):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    return tmp_path / "imgs", {}


BAD_DATA = {
    "wrong shape": (lambda p: (np.save(p / "d.npy", np.zeros((4, 1, 15), np.float32)),
                               (p / "d.npy", {}))[1],
                    r"d.npy: shape is \[4, 1, 15\], but input .* wants samples on axis 0: "
                    r"\(N, 1, 16\)"),
    "wrong dtype": (lambda p: (np.save(p / "d.npy", np.zeros((4, 1, 16), np.int16)),
                               (p / "d.npy", {}))[1],
                    r"dtype is int16, but input .* takes int8; float data is quantized with "
                    r"scale 0.00783\d* and zero point 0"),
    "labels count": (lambda p: (np.save(p / "d.npy", np.zeros((4, 1, 16), np.int8)),
                                np.save(p / "l.npy", np.zeros(3, np.int64)),
                                (p / "d.npy", {"labels": p / "l.npy"}))[2],
                     r"3 labels for 4 samples in .*d.npy; give one label per sample"),
    "undecodable image": (_bad_image_folder,
                          r"broken.png: cannot be decoded as an image .*convert it to PNG/JPEG"),
    "over the budget": (lambda p: (np.save(p / "d.npy", np.zeros((30, 1, 16), np.int8)),
                                   (p / "d.npy", {"max_samples": 20}))[1],
                        r"30 samples, more than the budget of 20 \(--max-samples\); pass "
                        r"--limit N"),
    "not finite": (lambda p: (np.save(p / "d.npy", np.full((2, 1, 16), np.nan, np.float32)),
                              (p / "d.npy", {}))[1],
                   r"sample 0 input 0: holds NaN or infinite values"),
    "unknown format": (lambda p: ((p / "d.csv").write_text("1,2"), (p / "d.csv", {}))[1],
                       r"d.csv: not a dataset microbuild reads .*--preprocess"),
}


@pytest.mark.parametrize("case", BAD_DATA)
def test_bad_data_is_refused_before_the_board_is_touched(case, tmp_path, host_device):
    if case == "undecodable image":
        pytest.importorskip("PIL", reason="pillow (microbuild's [images] extra) reads images")
    make, message = BAD_DATA[case]
    data, options = make(tmp_path)
    before = host_device.client.stats.requests
    with pytest.raises(DatasetError, match=message):
        api.validate("host", TINY_FC, data, device=host_device, **options)
    assert host_device.client.stats.requests == before  # nothing went to the device


def test_cli_json_and_exit_status(tmp_path, host_validate_firmware, capsys, monkeypatch):
    """`microbuild validate --json` through the CLI, on the shared firmware (--firmware)."""
    from microbuild.cli import main

    path, _ = tiny_fc_data(tmp_path, n=5)
    monkeypatch.chdir(tmp_path)
    code = main(["validate", "--board", "host", "--model", str(TINY_FC), "--data", str(path),
                 "--json", "--firmware", str(host_validate_firmware.elf)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["identical_to_tflm"] == 5 and doc["ran"] == 5 and doc["board"] == "host"
    np.save(tmp_path / "labels.npy", np.arange(5) % 4)
    code = main(["validate", "--board", "host", "--model", str(TINY_FC), "--data", str(path),
                 "--labels", str(tmp_path / "labels.npy"), "--firmware",
                 str(host_validate_firmware.elf)])
    shown = capsys.readouterr().out
    assert code == 0
    assert "5 of 5 samples identical to TFLM" in shown
    assert "against the labels (5 samples)" in shown and "latency per inference" in shown
    code = main(["validate", "--board", "host", "--model", str(TINY_FC), "--data",
                 str(tmp_path / "missing.npz")])
    assert code == 1
    assert "missing.npz: no such file or folder" in capsys.readouterr().err
