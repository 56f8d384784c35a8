"""uint8 model inputs and outputs end to end, as a camera app has them: the stock converter's
``inference_input_type`` / ``inference_output_type = tf.uint8`` model
(tests/models/boundaries/keras_camera_uint8.tflite) driven by `microbuild run` on the host board
with a uint8 ``--input`` file, its uint8 output saved with ``--output`` and compared with TFLM
(and as a standalone AOT firmware with the frame embedded by `microbuild build --input`); a file
of the wrong dtype is refused with the input's dtype, shape and quantization named.
(tests/firmware/test_quantize_qemu.py runs the uint8 models over RPC on the emulated Cortex-M7.)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from microbuild import cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

CAMERA = Path(__file__).resolve().parent.parent / "models" / "boundaries" / \
    "keras_camera_uint8.tflite"


def test_uint8_frames_in_and_uint8_scores_out(tmp_path, capsys):
    rng = np.random.default_rng(12)
    frame = rng.integers(0, 256, (1, 32, 32, 3), dtype=np.uint8)
    np.save(tmp_path / "frame.npy", frame)
    status = cli.main(["run", "--board", "host", "--model", str(CAMERA), "--input",
                       str(tmp_path / "frame.npy"), "--output", str(tmp_path / "scores.npy"),
                       "-o", str(tmp_path / "fw")])
    text = capsys.readouterr().out
    assert status == 0, text
    got = np.load(tmp_path / "scores.npy")
    want = np.asarray(run_tflm(CAMERA, [frame])[0]).reshape(got.shape)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    assert "uint8" in text

    np.save(tmp_path / "signed.npy", frame.astype(np.int8))
    status = cli.main(["run", "--board", "host", "--model", str(CAMERA), "--input",
                       str(tmp_path / "signed.npy"), "-o", str(tmp_path / "fw")])
    message = " ".join(capsys.readouterr().err.split())
    assert status != 0
    assert "signed.npy: dtype is int8, but input" in message
    assert "is uint8 [1, 32, 32, 3]" in message and "x.astype(np.uint8)" in message


def test_uint8_frame_embedded_in_a_standalone_firmware(tmp_path, capsys):
    """`microbuild build --input` embeds the uint8 frame in an AOT firmware; `--run --output`
    saves its uint8 scores, which are TFLM's."""
    frame = np.random.default_rng(13).integers(0, 256, (1, 32, 32, 3), dtype=np.uint8)
    np.save(tmp_path / "frame.npy", frame)
    status = cli.main(["build", "--board", "host", "--model", str(CAMERA), "--input",
                       str(tmp_path / "frame.npy"), "--run", "--output",
                       str(tmp_path / "scores.npy"), "-o", str(tmp_path / "fw")])
    assert status == 0, capsys.readouterr().out
    got = np.load(tmp_path / "scores.npy")
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.asarray(run_tflm(CAMERA, [frame])[0]).reshape(got.shape))
