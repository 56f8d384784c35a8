"""Model inputs and outputs as files: .npy for one tensor, .npz for several.

The same conventions everywhere (`build --input/--output`, `run --input/--output`): an input file
must hold exactly the model's input dtype and shape; several inputs go in an .npz, keyed by the
input's tensor name or ``arr_<k>`` / ``input<k>`` in input order. Outputs are saved the same way.
Several models (one firmware) share one .npz keyed ``<model>.input<k>`` / ``<model>.output<k>``,
the names a firmware's own embedded-input file (``firmware.input.npz``) uses.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from microbuild.compiler.compiled_model import TensorSpec
from microbuild.errors import MicrobuildError


class TensorFileError(MicrobuildError):
    """An --input file that does not match the model, or an unreadable one."""


def _describe(spec: TensorSpec) -> str:
    return f"{spec.dtype} {list(spec.shape)}"


def _check(array: np.ndarray, spec: TensorSpec, where: str) -> np.ndarray:
    if array.dtype != np.dtype(spec.dtype):
        # A float32 input (a float model) takes the values as they are; an integer one wants
        # float data quantized first.
        how = ("" if spec.dtype.startswith("float") or not spec.scale else
               f" — quantize float data with scale {spec.scale:g} and zero point "
               f"{spec.zero_point}")
        raise TensorFileError(
            f"{where}: dtype is {array.dtype}, but input '{spec.name}' is {_describe(spec)}; "
            f"convert it (e.g. numpy: x.astype(np.{spec.dtype})){how}")
    if tuple(array.shape) != tuple(spec.shape):
        raise TensorFileError(
            f"{where}: shape is {list(array.shape)}, but input '{spec.name}' is "
            f"{_describe(spec)}; reshape it (the element count must be {int(np.prod(spec.shape))})")
    return np.ascontiguousarray(array)


def load_inputs(path: str | Path, specs: Sequence[TensorSpec], model: str | None = None
                ) -> list[np.ndarray]:
    """The model's inputs from ``path`` (.npy or .npz), checked against ``specs``. With
    ``model`` (its prefix) an .npz may key them ``<model>.input<k>``, so one file serves every
    model of a firmware."""
    path = Path(path)
    if not path.is_file():
        raise TensorFileError(f"{path}: no such file")
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        # numpy calls any unrecognised file "pickled data"; that explanation only misleads.
        detail = "" if "pickle" in str(err) else f" ({err})"
        raise TensorFileError(f"{path}: not a NumPy .npy or .npz file{detail}; save arrays with "
                              "numpy.save (one input) or numpy.savez (several)") from None
    if isinstance(loaded, np.ndarray):
        if len(specs) != 1:
            raise TensorFileError(
                f"{path}: one array, but the model has {len(specs)} inputs; save them in an .npz "
                f"(numpy.savez) keyed {', '.join(repr(s.name) for s in specs)} or arr_0..arr_"
                f"{len(specs) - 1}")
        return [_check(loaded, specs[0], str(path))]
    with loaded:
        keys = list(loaded.files)
        arrays = []
        for k, spec in enumerate(specs):
            candidates = ([f"{model}.input{k}"] if model else []) + \
                [spec.name, f"arr_{k}", f"input{k}"]
            for key in candidates:
                if key in keys:
                    arrays.append(_check(loaded[key], spec, f"{path}[{key}]"))
                    break
            else:
                wanted = f"'{model}.input{k}'" if model else f"'{spec.name}' or arr_{k}"
                raise TensorFileError(
                    f"{path}: no array for {model + ' ' if model else ''}input {k} "
                    f"'{spec.name}' ({_describe(spec)}); the file has "
                    f"{', '.join(keys) or 'no arrays'}; key it {wanted}")
        return arrays


def random_inputs(specs: Sequence[TensorSpec], seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs over each integer type's full range (floats: standard normal)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in specs:
        dtype = np.dtype(spec.dtype)
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            arrays.append(rng.integers(info.min, info.max, size=spec.shape, endpoint=True,
                                       dtype=dtype))
        else:
            arrays.append(rng.standard_normal(spec.shape).astype(dtype))
    return arrays


def save_tensors(path: str | Path, arrays: Sequence[np.ndarray], specs: Sequence[TensorSpec]
                 ) -> Path:
    """One array to .npy; several to .npz keyed by tensor name (``path``'s suffix must agree)."""
    path = Path(path)
    if len(arrays) == 1 and path.suffix != ".npz":
        if path.suffix != ".npy":
            raise TensorFileError(f"{path}: name the file .npy (one array) or .npz")
        np.save(path, arrays[0])
    else:
        if path.suffix != ".npz":
            raise TensorFileError(f"{path}: the model has {len(arrays)} outputs; save them to an "
                                  f".npz file (e.g. {path.with_suffix('.npz').name})")
        np.savez(path, **{spec.name: a for spec, a in zip(specs, arrays)})
    return path


def save_model_outputs(path: str | Path, outputs: dict[str, Sequence[np.ndarray]]) -> Path:
    """Several models' outputs in one .npz keyed ``<model>.output<k>``."""
    path = Path(path)
    if path.suffix != ".npz":
        raise TensorFileError(f"{path}: {len(outputs)} models' outputs go in one .npz file "
                              f"(e.g. {path.with_suffix('.npz').name}), keyed <model>.output<k>")
    np.savez(path, **{f"{model}.output{k}": a for model, arrays in outputs.items()
                      for k, a in enumerate(arrays)})
    return path


def check_arrays(arrays: Sequence[np.ndarray] | np.ndarray, specs: Sequence[TensorSpec],
                 where: str = "input") -> list[np.ndarray]:
    """Arrays passed from Python (one array, or one per input) checked like an --input file."""
    if isinstance(arrays, np.ndarray):
        arrays = [arrays]
    arrays = [np.asarray(a) for a in arrays]
    if len(arrays) != len(specs):
        raise TensorFileError(f"{where}: {len(arrays)} arrays given, but the model has "
                              f"{len(specs)} inputs ({', '.join(_describe(s) for s in specs)})")
    return [_check(a, s, f"{where} {k}") for k, (a, s) in enumerate(zip(arrays, specs))]
