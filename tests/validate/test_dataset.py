"""Every dataset form `microbuild validate` reads, converted to the model's inputs without a
board: .npz/.npy with samples on axis 0, a folder of .npy, images (grey, RGB, NHWC and NCHW),
16-bit WAV, labelled class folders, a --preprocess hook, --limit/--seed; and bad data refused
with a message that says what to do."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from microbuild.compiler.codegen import TensorSpec
from microbuild.validate.dataset import (DatasetError, load_dataset, load_labels, quantize,
                                        tensor_specs)

MODELS = Path(__file__).resolve().parent.parent / "models"
TINY_FC = MODELS / "tiny_fc.tflite"  # 1x16 int8 input, scale 0.00783794, zp 0


def spec(shape, dtype="int8", scale=1 / 255, zero_point=-128, name="x") -> TensorSpec:
    return TensorSpec(name, 0, tuple(shape), dtype, scale, zero_point,
                      int(np.prod(shape)) * np.dtype(dtype).itemsize)


def test_float_npz_is_quantized_with_the_inputs_scale_and_zero_point(tmp_path):
    (s,) = tensor_specs(TINY_FC)
    x = np.random.default_rng(1).uniform(-1.5, 1.5, (7, 1, 16)).astype(np.float32)
    np.savez(tmp_path / "d.npz", **{s.name: x})
    data = load_dataset(tmp_path / "d.npz", [s])
    assert len(data) == 7 and data.names[3] == "d.npz[3]"
    want = np.clip(np.round(x[3] / s.scale) + s.zero_point, -128, 127).astype(np.int8)
    assert data.samples[3][0].dtype == np.int8
    assert np.array_equal(data.samples[3][0], want)
    assert np.any(want == 127)  # values past the input's range saturate
    assert np.allclose(data.real[3][0], x[3])


def test_integer_npy_is_taken_as_is_and_batch_axis_may_be_dropped(tmp_path):
    (s,) = tensor_specs(TINY_FC)
    x = np.random.default_rng(2).integers(-128, 128, (5, 16), dtype=np.int8)  # (N, 16) for 1x16
    np.save(tmp_path / "d.npy", x)
    data = load_dataset(tmp_path / "d.npy", [s])
    assert [a[0].shape for a in data.samples] == [(1, 16)] * 5
    assert np.array_equal(np.stack([a[0] for a in data.samples]).reshape(5, 16), x)
    assert np.allclose(data.real[1][0], (x[1].astype(np.float64) - s.zero_point) * s.scale)


def test_npz_keyed_arr_k_for_a_two_input_model(tmp_path):
    specs = [spec((1, 4), name="a"), spec((1, 2), "int16", 0.5, 0, name="b")]
    np.savez(tmp_path / "d.npz", np.zeros((3, 1, 4), np.int8), np.ones((3, 1, 2), np.float32))
    data = load_dataset(tmp_path / "d.npz", specs)
    assert len(data) == 3
    assert data.samples[2][1].dtype == np.int16 and data.samples[2][1].tolist() == [[2, 2]]


def test_folder_of_npy_in_name_order(tmp_path):
    (s,) = tensor_specs(TINY_FC)
    for k in (2, 0, 1):
        np.save(tmp_path / f"s{k}.npy", np.full((1, 16), k, np.int8))
    data = load_dataset(tmp_path, [s])
    assert data.names == ["s0.npy", "s1.npy", "s2.npy"]
    assert [int(a[0][0, 0]) for a in data.samples] == [0, 1, 2]
    assert data.labels is None


def _png(path: Path, pixels: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(pixels).save(path)


@pytest.mark.parametrize("shape,layout", [((1, 8, 6, 3), "nhwc"), ((1, 3, 8, 6), "nchw"),
                                          ((1, 8, 6, 1), "grey")])
def test_images_are_resized_and_laid_out_as_the_input(tmp_path, shape, layout):
    pytest.importorskip("PIL", reason="pillow (microbuild's [images] extra) reads images")
    rgb = np.zeros((16, 12, 3), np.uint8)
    rgb[..., 0] = 255  # pure red: grey level 76 (ITU-R 601-2 luma, what pillow's "L" uses)
    _png(tmp_path / "red.png", rgb)
    data = load_dataset(tmp_path, [spec(shape)])
    (x,) = data.samples[0]
    assert x.shape == shape and x.dtype == np.int8
    if layout == "grey":
        assert np.all(data.real[0][0] == pytest.approx(76 / 255, abs=1e-6))
    else:
        channels = x[0] if layout == "nchw" else np.moveaxis(x[0], -1, 0)
        assert np.all(channels[0] == 127) and np.all(channels[1:] == -128)  # 1.0 and 0.0


def test_labelled_class_folders(tmp_path):
    pytest.importorskip("PIL", reason="pillow (microbuild's [images] extra) reads images")
    for cls, n in (("cat", 2), ("dog", 3)):
        (tmp_path / cls).mkdir()
        for k in range(n):
            _png(tmp_path / cls / f"{k}.png", np.full((4, 4), 40 * k, np.uint8))
    data = load_dataset(tmp_path, [spec((1, 4, 4, 1))])
    assert data.classes == ["cat", "dog"]
    assert data.labels.tolist() == [0, 0, 1, 1, 1]
    assert data.names[2] == "dog/0.png"


def _wav(path: Path, pcm: np.ndarray, width: int = 2, channels: int = 1) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())


def test_wav_is_framed_to_the_input(tmp_path):
    pcm = (np.arange(300, dtype=np.int16) - 150) * 100
    _wav(tmp_path / "a.wav", pcm)
    as_int16 = load_dataset(tmp_path, [spec((1, 480), "int16", 1.0, 0)])
    x = as_int16.samples[0][0].reshape(-1)
    assert np.array_equal(x[:300], pcm) and not x[300:].any()  # zero-padded to 480
    as_int8 = load_dataset(tmp_path, [spec((1, 256), "int8", 1 / 128, 0)])
    want = np.clip(np.round(pcm[:256] / 32768.0 * 128), -128, 127).astype(np.int8)
    assert np.array_equal(as_int8.samples[0][0].reshape(-1), want)


def test_preprocess_hook_reads_any_file(tmp_path):
    (tmp_path / "hook.py").write_text(
        "import numpy as np\n"
        "def load(path, specs):\n"
        "    values = [float(v) for v in path.read_text().split(',')]\n"
        "    return np.array(values, dtype=np.float32).reshape(specs[0].shape)\n")
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "a.csv").write_text(",".join(["0.5"] * 16))
    (s,) = tensor_specs(TINY_FC)
    data = load_dataset(folder, [s], preprocess=f"{tmp_path / 'hook.py'}:load")
    assert np.all(data.samples[0][0] == round(0.5 / s.scale))


def test_limit_is_a_seeded_subset_in_file_order(tmp_path):
    (s,) = tensor_specs(TINY_FC)
    x = np.arange(50, dtype=np.int8).reshape(50, 1, 1).repeat(16, axis=2)
    np.save(tmp_path / "d.npy", x)
    np.save(tmp_path / "labels.npy", np.arange(50) % 4)
    first = load_dataset(tmp_path / "d.npy", [s], labels=tmp_path / "labels.npy", limit=10,
                         seed=5)
    again = load_dataset(tmp_path / "d.npy", [s], labels=tmp_path / "labels.npy", limit=10,
                         seed=5)
    other = load_dataset(tmp_path / "d.npy", [s], labels=tmp_path / "labels.npy", limit=10,
                         seed=6)
    picked = [int(a[0][0, 0]) for a in first.samples]
    assert len(picked) == 10 and picked == sorted(picked)
    assert picked == [int(a[0][0, 0]) for a in again.samples]
    assert picked != [int(a[0][0, 0]) for a in other.samples]
    assert first.labels.tolist() == [p % 4 for p in picked]  # labels follow their samples


def test_text_labels(tmp_path):
    (tmp_path / "l.txt").write_text("0\n3\n2\n")
    assert load_labels(tmp_path / "l.txt").tolist() == [0, 3, 2]
    (tmp_path / "bad.txt").write_text("0\ncat\n")
    with pytest.raises(DatasetError, match=r"'cat' is not a class index"):
        load_labels(tmp_path / "bad.txt")


def test_quantize_saturates_to_the_dtype():
    s = spec((3,), "int8", 0.1, 10)
    assert quantize(np.array([-100.0, 0.0, 100.0]), s).tolist() == [-128, 10, 127]


def test_a_folder_over_the_budget_is_refused_before_its_files_are_decoded(tmp_path):
    for k in range(3):
        (tmp_path / f"{k}.png").write_bytes(b"not an image at all")  # would fail to decode
    with pytest.raises(DatasetError, match=r"3 samples, more than the budget of 2 "
                                           r"\(--max-samples\); pass --limit N"):
        load_dataset(tmp_path, [spec((1, 4, 4, 1))], max_samples=2)
