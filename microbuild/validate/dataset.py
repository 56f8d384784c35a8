"""A validation dataset: samples read from files, checked against the model's inputs and
converted to what the deployed model takes, before any board is touched.

Forms (samples are on axis 0 unless a file is one sample):
- ``.npz``: one array per model input, keyed like `run --input` (tensor name, ``arr_<k>``,
  ``input<k>``), each ``(N, *input shape)`` (or ``(N, *shape[1:])`` when the batch is 1);
- ``.npy``: the same for a one-input model;
- a folder of ``.npy`` (one sample each), of images (PNG/JPEG/BMP/GIF, needs pillow) or of WAV
  files (16-bit PCM), read in name order; a folder of sub-folders is a labelled dataset, one
  class per sub-folder (the classes in name order).

Float data is quantized with the input tensor's scale and zero point (images become floats in
[0, 1], WAV samples floats in [-1, 1), unless the input is int16, which takes PCM as it is);
integer data must have the input's own dtype and is taken as is. ``preprocess``
(``module:function``) replaces all of this for one file: it gets the path and the model's
input specs and returns one array per input.
"""

from __future__ import annotations

import importlib
import wave
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from microbuild.compiler.compiled_model import TensorSpec
from microbuild.errors import MicrobuildError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif")
WAV_SUFFIXES = (".wav",)
# A dataset bigger than this is refused unless --limit picks a subset or --max-samples raises
# it: 10,000 samples over a 115,200 baud UART is hours, which nobody means by accident.
DEFAULT_MAX_SAMPLES = 10_000


class DatasetError(MicrobuildError):
    """Data that does not fit the model: refused before the board is touched."""


@dataclass
class Dataset:
    """Samples ready for the deployed model, in its input dtypes, one list of arrays each."""

    source: str
    samples: list[list[np.ndarray]]
    # The same samples as real numbers (dequantized when the data was integer): the float
    # model's inputs.
    real: list[list[np.ndarray]]
    names: list[str]  # where each sample came from ("data.npz[17]", "cats/003.png")
    labels: np.ndarray | None = None
    classes: list[str] = field(default_factory=list)  # a labelled folder's class names

    def __len__(self) -> int:
        return len(self.samples)

    def subset(self, indices: Sequence[int]) -> "Dataset":
        return Dataset(self.source, [self.samples[i] for i in indices],
                       [self.real[i] for i in indices], [self.names[i] for i in indices],
                       None if self.labels is None else self.labels[list(indices)], self.classes)


def tensor_specs(model_path: str | Path, kind: str = "inputs") -> list[TensorSpec]:
    """The model's inputs (or outputs) as TensorSpecs, read from the .tflite alone (no build)."""
    from microbuild.model.reader import read_model

    graph = read_model(model_path)
    specs = []
    for t in (graph.inputs if kind == "inputs" else graph.outputs):
        tensor = graph.tensors[t]
        quant = tensor.quant
        specs.append(TensorSpec(name=tensor.name, tensor=t, shape=tuple(tensor.shape),
                                dtype=tensor.dtype,
                                scale=float(quant.scale[0]) if quant is not None else 0.0,
                                zero_point=int(quant.zero_point[0]) if quant is not None else 0,
                                bytes=tensor.nbytes))
    return specs


def _describe(spec: TensorSpec) -> str:
    return f"'{spec.name}' ({spec.dtype} {list(spec.shape)})"


def quantize(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """Real numbers as the input's dtype: round(x / scale) + zero point, saturated."""
    dtype = np.dtype(spec.dtype)
    if np.issubdtype(dtype, np.floating):
        return values.astype(dtype)
    info = np.iinfo(dtype)
    q = np.round(values.astype(np.float64) / spec.scale) + spec.zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The real numbers ``values`` (of the tensor ``spec``) stand for, as float64."""
    if not spec.scale:
        return values.astype(np.float64)
    return (values.astype(np.float64) - spec.zero_point) * spec.scale


def _convert(array: np.ndarray, spec: TensorSpec, where: str) -> tuple[np.ndarray, np.ndarray]:
    """One sample (already in the input's shape) as (model dtype, real numbers)."""
    dtype = np.dtype(spec.dtype)
    if np.issubdtype(array.dtype, np.floating):
        if np.issubdtype(dtype, np.integer) and not spec.scale:
            raise DatasetError(f"{where}: float data, but input {_describe(spec)} has no "
                               "quantization to convert it with; give integer data")
        if not np.all(np.isfinite(array)):
            raise DatasetError(f"{where}: holds NaN or infinite values")
        return quantize(array, spec), array.astype(np.float64)
    if array.dtype != dtype:
        hint = (f"float data is quantized with scale {spec.scale:g} and zero point "
                f"{spec.zero_point}, integer data must already be {spec.dtype}"
                if spec.scale else f"convert it (numpy: x.astype(np.{spec.dtype}))")
        raise DatasetError(f"{where}: dtype is {array.dtype}, but input {_describe(spec)} takes "
                           f"{spec.dtype}; {hint}")
    return array, dequantize(array, spec)


def _one_sample(array: np.ndarray, spec: TensorSpec, where: str) -> np.ndarray:
    shape = tuple(spec.shape)
    if array.shape == shape:
        return array
    if shape and shape[0] == 1 and array.shape == shape[1:]:
        return array.reshape(shape)
    raise DatasetError(f"{where}: one sample has shape {list(array.shape)}, but input "
                       f"{_describe(spec)} takes {list(shape)}; reshape the data (the element "
                       f"count must be {int(np.prod(shape))})")


def _batched(array: np.ndarray, spec: TensorSpec, where: str) -> list[np.ndarray]:
    """Samples on axis 0, each in the input's shape."""
    shape = tuple(spec.shape)
    if array.ndim == len(shape) + 1 or (shape and shape[0] == 1 and array.ndim == len(shape)):
        if array.shape[0] == 0:
            raise DatasetError(f"{where}: holds no samples")
        if array.ndim == len(shape) + 1 and array.shape[1:] == shape:
            return [array[i] for i in range(array.shape[0])]
        if shape and shape[0] == 1 and array.shape[1:] == shape[1:]:
            return [array[i].reshape(shape) for i in range(array.shape[0])]
    raise DatasetError(f"{where}: shape is {list(array.shape)}, but input {_describe(spec)} wants "
                       f"samples on axis 0: (N, {', '.join(str(d) for d in shape)})"
                       + (f" or (N, {', '.join(str(d) for d in shape[1:])})"
                          if shape and shape[0] == 1 else ""))


def _load_numpy(path: Path):
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        detail = "" if "pickle" in str(err) else f" ({err})"
        raise DatasetError(f"{path}: not a NumPy .npy or .npz file{detail}; save samples with "
                           "numpy.save or numpy.savez") from None


def _from_arrays(path: Path, specs: Sequence[TensorSpec]) -> Dataset:
    loaded = _load_numpy(path)
    if isinstance(loaded, np.ndarray):
        if len(specs) != 1:
            raise DatasetError(f"{path}: one array, but the model has {len(specs)} inputs; save "
                               "them in an .npz keyed " + ", ".join(repr(s.name) for s in specs))
        per_input = [_batched(loaded, specs[0], str(path))]
    else:
        with loaded:
            keys = list(loaded.files)
            per_input = []
            for k, spec in enumerate(specs):
                key = next((c for c in (spec.name, f"arr_{k}", f"input{k}") if c in keys), None)
                if key is None:
                    raise DatasetError(f"{path}: no array for input {k} {_describe(spec)}; the "
                                       f"file has {', '.join(keys) or 'no arrays'}; key it "
                                       f"'{spec.name}' or arr_{k}")
                per_input.append(_batched(loaded[key], spec, f"{path}[{key}]"))
    counts = {len(samples) for samples in per_input}
    if len(counts) > 1:
        raise DatasetError(f"{path}: the inputs have different sample counts "
                           f"({', '.join(str(len(s)) for s in per_input)}); each needs one "
                           "array per sample")
    samples, real = [], []
    for i in range(len(per_input[0])):
        pairs = [_convert(per_input[k][i], spec, f"{path} sample {i} input {k}")
                 for k, spec in enumerate(specs)]
        samples.append([p[0] for p in pairs])
        real.append([p[1] for p in pairs])
    return Dataset(str(path), samples, real, [f"{path.name}[{i}]" for i in range(len(samples))])


def _image_layout(spec: TensorSpec) -> tuple[int, int, int, bool]:
    """(height, width, channels, channels first) of an image input."""
    shape = tuple(spec.shape)
    dims = shape[1:] if len(shape) == 4 else shape
    if len(dims) == 2:
        return dims[0], dims[1], 1, False
    if len(dims) == 3:
        if dims[2] in (1, 3):
            return dims[0], dims[1], dims[2], False
        if dims[0] in (1, 3):
            return dims[1], dims[2], dims[0], True
    raise DatasetError(f"input {_describe(spec)} is not an image (height x width x 1 or 3 "
                       "channels); give the data as .npy/.npz or pass --preprocess")


def read_image(path: Path, spec: TensorSpec) -> np.ndarray:
    """An image file resized to the input, grey or RGB as its channels say, as floats in [0, 1]
    in the input's layout (NHWC or NCHW)."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise DatasetError(f"{path}: reading images needs pillow: pip install "
                           "'microbuild-mcu[images]'") from None
    height, width, channels, channels_first = _image_layout(spec)
    try:
        with Image.open(path) as image:
            image = image.convert("L" if channels == 1 else "RGB")
            image = image.resize((width, height), Image.Resampling.BILINEAR)
            pixels = np.asarray(image, dtype=np.float32) / 255.0
    except (UnidentifiedImageError, OSError, ValueError) as err:
        raise DatasetError(f"{path}: cannot be decoded as an image ({err}); remove it from the "
                           "folder or convert it to PNG/JPEG") from None
    pixels = pixels.reshape(height, width, channels)
    if channels_first:
        pixels = pixels.transpose(2, 0, 1)
    return pixels.reshape(spec.shape)


def read_wav(path: Path, spec: TensorSpec) -> np.ndarray:
    """A 16-bit PCM WAV (first channel) framed to the input: its first N samples, zero-padded.
    An int16 input takes the PCM values; any other input floats in [-1, 1)."""
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2:
                raise DatasetError(f"{path}: {8 * wav.getsampwidth()}-bit samples; only 16-bit "
                                   "PCM WAV files are read (convert it, or pass --preprocess)")
            frames = wav.readframes(wav.getnframes())
            channels = wav.getnchannels()
    except (wave.Error, EOFError) as err:
        raise DatasetError(f"{path}: not a PCM WAV file ({err}); convert it to 16-bit PCM") \
            from None
    pcm = np.frombuffer(frames, dtype="<i2")[::channels]
    count = int(np.prod(spec.shape))
    framed = np.zeros(count, dtype=np.int16)
    framed[:min(count, pcm.size)] = pcm[:count]
    if spec.dtype == "int16":
        return framed.reshape(spec.shape)
    return (framed.astype(np.float32) / 32768.0).reshape(spec.shape)


def _sample_from_file(path: Path, specs: Sequence[TensorSpec],
                      preprocess: Callable | None) -> list[np.ndarray]:
    """One file as one sample: one array per input, in the input's shape (not yet converted)."""
    if preprocess is not None:
        arrays = preprocess(path, list(specs))
        arrays = [arrays] if isinstance(arrays, np.ndarray) else list(arrays)
        if len(arrays) != len(specs):
            raise DatasetError(f"{path}: the --preprocess function returned {len(arrays)} arrays "
                               f"for a model with {len(specs)} inputs")
        return [_one_sample(np.asarray(a), s, f"{path} (after --preprocess) input {k}")
                for k, (a, s) in enumerate(zip(arrays, specs))]
    if len(specs) != 1:
        raise DatasetError(f"{path}: a folder holds one-input samples, but the model has "
                           f"{len(specs)} inputs; give an .npz with one array per input")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        loaded = _load_numpy(path)
        if not isinstance(loaded, np.ndarray):
            raise DatasetError(f"{path}: an .npz in a folder of samples; save one sample per .npy")
        return [_one_sample(loaded, specs[0], str(path))]
    if suffix in IMAGE_SUFFIXES:
        return [read_image(path, specs[0])]
    return [read_wav(path, specs[0])]


def _sample_files(folder: Path) -> list[Path]:
    suffixes = (".npy",) + IMAGE_SUFFIXES + WAV_SUFFIXES
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes)


def _over_budget(source: Path, count: int, max_samples: int) -> DatasetError:
    return DatasetError(f"{source}: {count:,} samples, more than the budget of {max_samples:,} "
                        "(--max-samples); pass --limit N for a seeded random subset, or raise "
                        "--max-samples")


def _from_folder(folder: Path, specs: Sequence[TensorSpec], preprocess: Callable | None,
                 max_samples: int | None = None) -> Dataset:
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir() and _sample_files(p))
    if classes:
        files = [(f, k) for k, c in enumerate(classes) for f in _sample_files(folder / c)]
    else:
        files = [(f, -1) for f in (_sample_files(folder) if preprocess is None else
                                   sorted(p for p in folder.iterdir() if p.is_file()))]
    if not files:
        raise DatasetError(f"{folder}: no samples (.npy, {', '.join(IMAGE_SUFFIXES)}, .wav files, "
                           "or one sub-folder of them per class)")
    if max_samples is not None and len(files) > max_samples:
        raise _over_budget(folder, len(files), max_samples)  # before decoding any of them
    samples, real, names = [], [], []
    for path, _ in files:
        pairs = [_convert(a, spec, f"{path} input {k}") for k, (a, spec) in
                 enumerate(zip(_sample_from_file(path, specs, preprocess), specs))]
        samples.append([p[0] for p in pairs])
        real.append([p[1] for p in pairs])
        names.append(str(path.relative_to(folder)))
    labels = np.array([k for _, k in files], dtype=np.int64) if classes else None
    return Dataset(str(folder), samples, real, names, labels, classes)


def load_preprocess(spec: str) -> Callable:
    """``module:function`` (a module on the path or a .py file) as a callable."""
    module_name, _, function = spec.rpartition(":")
    if not module_name or not function:
        raise DatasetError(f"--preprocess {spec!r}: write it module:function "
                           "(e.g. mypre:load or path/to/mypre.py:load)")
    try:
        if module_name.endswith(".py"):
            import importlib.util

            loader = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
            if loader is None or not Path(module_name).is_file():
                raise ImportError(f"no file {module_name}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            module = importlib.import_module(module_name)
    except ImportError as err:
        raise DatasetError(f"--preprocess {spec!r}: cannot import {module_name} ({err})") \
            from None
    if not callable(getattr(module, function, None)):
        raise DatasetError(f"--preprocess {spec!r}: {module_name} has no function {function}")
    return getattr(module, function)


def load_labels(path: str | Path) -> np.ndarray:
    """Class indices, one per sample: an .npy of integers, or a text file of one per line."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"--labels {path}: no such file")
    if path.suffix == ".npy":
        labels = _load_numpy(path)
        if not isinstance(labels, np.ndarray):
            raise DatasetError(f"--labels {path}: an .npz; save the labels with numpy.save")
    else:
        words = path.read_text(encoding="utf-8", errors="replace").split()
        try:
            labels = np.array([int(w) for w in words], dtype=np.int64)
        except ValueError:
            bad = next(w for w in words if not w.lstrip("-").isdigit())
            raise DatasetError(f"--labels {path}: {bad!r} is not a class index; write one "
                               "integer per line") from None
    labels = np.asarray(labels).reshape(-1) if np.asarray(labels).ndim == 2 and \
        np.asarray(labels).shape[1] == 1 else np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise DatasetError(f"--labels {path}: {labels.dtype} {list(labels.shape)}; labels are one "
                           "integer class index per sample (shape (N,))")
    return labels.astype(np.int64)


def load_dataset(data: str | Path, specs: Sequence[TensorSpec], labels: str | Path | None = None,
                 limit: int | None = None, seed: int = 0, preprocess: str | Callable | None = None,
                 max_samples: int = DEFAULT_MAX_SAMPLES) -> Dataset:
    """The dataset ``data`` for a model with inputs ``specs``, with ``labels`` if given, cut to a
    seeded random subset of ``limit`` samples (kept in file order). Raises DatasetError."""
    path = Path(data)
    hook = load_preprocess(preprocess) if isinstance(preprocess, str) else preprocess
    if limit is not None and limit < 1:
        raise DatasetError(f"--limit {limit}: give a number of samples of at least 1")
    if path.is_dir():
        # Without --limit the budget is known from the file count, before anything is decoded.
        dataset = _from_folder(path, specs, hook, max_samples if limit is None else None)
    elif not path.exists():
        raise DatasetError(f"{path}: no such file or folder")
    elif hook is not None:
        arrays = _sample_from_file(path, specs, hook)
        pairs = [_convert(a, s, f"{path} input {k}") for k, (a, s) in
                 enumerate(zip(arrays, specs))]
        dataset = Dataset(str(path), [[p[0] for p in pairs]], [[p[1] for p in pairs]],
                          [path.name])
    elif path.suffix.lower() in (".npy", ".npz"):
        dataset = _from_arrays(path, specs)
    else:
        raise DatasetError(f"{path}: not a dataset microbuild reads (.npz, .npy, or a folder of "
                           ".npy, image or WAV files); pass --preprocess module:function for it")
    if labels is not None:
        given = load_labels(labels)
        if len(given) != len(dataset):
            raise DatasetError(f"--labels {labels}: {len(given)} labels for {len(dataset)} "
                               f"samples in {path}; give one label per sample")
        dataset.labels = given
    if limit is not None and limit < len(dataset):
        chosen = np.sort(np.random.default_rng(seed).choice(len(dataset), limit, replace=False))
        dataset = dataset.subset([int(i) for i in chosen])
    if len(dataset) > max_samples:
        raise _over_budget(path, len(dataset), max_samples)
    return dataset
