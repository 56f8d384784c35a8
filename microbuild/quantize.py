"""`microbuild quantize`: a float .tflite and a calibration set in, a full-integer .tflite out,
through Google's ai-edge-quantizer (the optional extra ``microbuild-mcu[quantize]``; the core
install does not pull it in).

Static quantization: int8 weights (per channel, or per tensor with ``per_tensor``) and int8
activations, or int16 activations with ``int16_activations`` (TFLM's int16x8). The calibration
set is read like `validate --data` (microbuild.validate.dataset) for the float model's inputs.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from microbuild.errors import MicrobuildError


class QuantizeError(MicrobuildError):
    """The float model or the calibration set cannot be quantized."""


@dataclass
class OpChange:
    """What quantization did to one operator of the model."""

    index: int
    opcode: str
    before: str  # the operator's input -> output dtypes in the float model
    after: str  # ... and in the quantized one

    def to_dict(self) -> dict:
        return self.__dict__.copy()


@dataclass
class QuantizeResult:
    float_model: Path
    model: Path
    activations: str  # "int8" or "int16"
    weights: str  # "per channel" or "per tensor"
    calibration_samples: int
    ops: list[OpChange]
    float_bytes: int
    model_bytes: int

    def to_dict(self) -> dict:
        return {"float_model": str(self.float_model), "model": str(self.model),
                "activations": self.activations, "weights": self.weights,
                "calibration_samples": self.calibration_samples,
                "float_bytes": self.float_bytes, "model_bytes": self.model_bytes,
                "ops": [o.to_dict() for o in self.ops]}


def _dtypes(graph, op) -> str:
    ins = [graph.tensors[i].dtype for i in op.inputs if i >= 0 and not graph.tensors[i].is_constant]
    outs = [graph.tensors[i].dtype for i in op.outputs]
    return f"{','.join(ins) or '-'} -> {','.join(outs)}"


def op_changes(float_model: Path, model: Path) -> list[OpChange]:
    """Each operator of the quantized model with its dtypes, next to the float model's operator
    of the same kind at the same place (quantization may add QUANTIZE/DEQUANTIZE at the edges)."""
    from microbuild.model.reader import read_model

    before, after = read_model(float_model), read_model(model)
    float_ops = [(op.opcode, _dtypes(before, op)) for op in before.operators]
    changes = []
    cursor = 0
    for k, op in enumerate(after.operators):
        was = "(added)"
        for j in range(cursor, len(float_ops)):
            if float_ops[j][0] == op.opcode:
                was, cursor = float_ops[j][1], j + 1
                break
        changes.append(OpChange(k, op.opcode, was, _dtypes(after, op)))
    return changes


def _signature(float_model: Path) -> tuple[str, list[str]]:
    """The float model's first signature and its input names in the graph's input order
    (ai-edge-quantizer feeds calibration data by signature)."""
    from ai_edge_litert import interpreter as litert

    from microbuild.model.reader import read_model

    interp = litert.Interpreter(model_path=str(float_model))
    signatures = interp.get_signature_list()
    if not signatures:
        raise QuantizeError(f"{float_model}: the model has no signature, which ai-edge-quantizer "
                            "needs; convert it with TensorFlow's converter or ai-edge-torch, "
                            "which add one ('serving_default')")
    key = next(iter(signatures))
    details = interp.get_signature_runner(key).get_input_details()
    by_tensor = {d["index"]: name for name, d in details.items()}
    graph_inputs = read_model(float_model).inputs
    missing = [t for t in graph_inputs if t not in by_tensor]
    if missing:
        raise QuantizeError(f"{float_model}: signature '{key}' does not name inputs {missing}")
    return key, [by_tensor[t] for t in graph_inputs]


def _calibrate(q, float_model: Path, calibration: dict) -> dict:
    """Each tensor's min and max over the whole calibration set.

    Quantizer.calibrate keeps a moving average of the min/max instead (smoothing 0.95): the last
    samples then decide the ranges, and a set in some order (sorted by class, a sweep over x)
    gets ranges that clip most of the others. TensorFlow's converter takes the plain min/max;
    so do we, through the same Calibrator with the min/max update (the recipe is the
    Quantizer's own)."""
    from ai_edge_quantizer import calibrator
    from ai_edge_quantizer.utils import qsv_utils

    calib = calibrator.Calibrator(str(float_model), qsv_update_func=qsv_utils.min_max_update)
    calib.calibrate(calibration, q._recipe_manager)
    return calib.get_model_qsvs()


def quantize_model(float_model: str | Path, data: str | Path, out: str | Path,
                   int16_activations: bool = False, per_tensor: bool = False,
                   limit: int | None = None, seed: int = 0,
                   preprocess: str | Callable | None = None) -> QuantizeResult:
    """Quantize ``float_model`` calibrated on ``data`` (validate's dataset forms) and write the
    full-integer model to ``out``."""
    from microbuild.validate.dataset import load_dataset, tensor_specs

    float_model, out = Path(float_model), Path(out)
    if not float_model.is_file():
        raise QuantizeError(f"{float_model}: no such file")
    if out.suffix != ".tflite":
        raise QuantizeError(f"-o {out}: name the quantized model .tflite")
    specs = tensor_specs(float_model)
    not_float = [f"{k} '{s.name}' ({s.dtype})" for k, s in enumerate(specs)
                 if not s.dtype.startswith("float")]
    if not_float:
        raise QuantizeError(f"{float_model}: input {', '.join(not_float)} is not float; quantize "
                            "takes the float model (already quantized models validate as they are)")
    dataset = load_dataset(data, specs, limit=limit, seed=seed, preprocess=preprocess)
    try:
        from ai_edge_quantizer import qtyping, quantizer
    except ImportError:
        raise QuantizeError("quantize needs ai-edge-quantizer: pip install "
                            "'microbuild-mcu[quantize]'") from None
    key, names = _signature(float_model)
    calibration = {key: [{name: x for name, x in zip(names, sample)}
                         for sample in dataset.samples]}
    q = quantizer.Quantizer(str(float_model))
    granularity = (qtyping.QuantGranularity.TENSORWISE if per_tensor
                   else qtyping.QuantGranularity.CHANNELWISE)
    q.add_static_config(regex=".*", operation_name=qtyping.TFLOperationName.ALL_SUPPORTED,
                        activation_num_bits=16 if int16_activations else 8, weight_num_bits=8,
                        weight_granularity=granularity)
    try:
        # Its calibration progress bar and LiteRT's debugging warning say nothing to our user.
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            result = q.quantize(_calibrate(q, float_model, calibration),
                                enable_progress_report=False)
    except (ValueError, RuntimeError) as err:
        raise QuantizeError(f"{float_model}: ai-edge-quantizer could not quantize it: {err}") \
            from None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bytes(result.quantized_model))
    return QuantizeResult(float_model, out, "int16" if int16_activations else "int8",
                          "per tensor" if per_tensor else "per channel", len(dataset),
                          op_changes(float_model, out), float_model.stat().st_size,
                          out.stat().st_size)
