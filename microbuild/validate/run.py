"""Run a dataset through the deployed model on the board (over the RPC link) and through TFLM on
the host, and gather the figures of a ValidationReport.

Everything that can be wrong with the data is found before the board is touched: the dataset is
read and converted, TFLM's (and the float model's) outputs are computed, and only then is the
firmware built and started.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from microbuild.boards import resolve_board
from microbuild.device.device import connect
from microbuild.device.errors import TransportClosedError
from microbuild.device.runners.qemu import semihosting_console_board, supports_semihosting_console
from microbuild.device.timing import duration
from microbuild.errors import BoardError, DeviceError, MicrobuildError
from microbuild.firmware.build import build_firmware
from microbuild.tflm_reference import tflm_outputs_many
from microbuild.validate.dataset import (DEFAULT_MAX_SAMPLES, Dataset, DatasetError, dequantize,
                                        load_dataset, tensor_specs)
from microbuild.validate.metrics import LabelScore, OutputError, histogram


@dataclass
class SampleFailure:
    index: int  # position in the (limited) dataset
    name: str  # where the sample came from
    message: str


@dataclass
class ValidationReport:
    board: str
    model: str
    data: str
    samples: int  # in the dataset (after --limit)
    timer_hz: int = 0
    latency_kind: str = ""  # "instructions" (QEMU icount), "cycles", "wall clock" (host)
    ticks: list[int] = field(default_factory=list)  # per sample run
    identical: int = 0  # samples whose every output equals TFLM's, bit for bit
    failures: list[SampleFailure] = field(default_factory=list)
    differing: list[int] = field(default_factory=list)  # samples that differ from TFLM
    interrupted: bool = False  # Ctrl-C or a device that went away ended the run early
    float_model: str | None = None
    float_errors: list[OutputError] = field(default_factory=list)
    labels: LabelScore | None = None
    class_names: list[str] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # host wall clock of the run loop, for samples/s
    reference_seconds: float = 0.0  # host wall clock of TFLM (and the float model) on the data
    link: dict[str, int] = field(default_factory=dict)

    @property
    def ran(self) -> int:
        """Samples that ran on the device and came back."""
        return len(self.ticks)

    def latency(self) -> dict[str, Any]:
        if not self.ticks:
            return {}
        board = resolve_board(self.board)
        low, mid, high = min(self.ticks), int(statistics.median(self.ticks)), max(self.ticks)
        shown = {k: duration(v, self.timer_hz, board).column()[1]
                 for k, v in (("min", low), ("median", mid), ("max", high))}
        return {"min_ticks": low, "median_ticks": mid, "max_ticks": high,
                "timer_hz": self.timer_hz, "unit": duration(0, self.timer_hz, board).column()[0],
                "kind": self.latency_kind, "shown": shown, "histogram": histogram(
                    np.array(self.ticks), bins=min(20, max(1, len(set(self.ticks)))))}

    def to_dict(self) -> dict[str, Any]:
        return {
            "board": self.board, "model": self.model, "data": self.data,
            "samples": self.samples, "ran": self.ran, "interrupted": self.interrupted,
            "identical_to_tflm": self.identical, "differing_from_tflm": self.differing,
            "failures": [f.__dict__ for f in self.failures],
            "latency": self.latency(),
            "float_model": self.float_model,
            "vs_float": [e.to_dict() for e in self.float_errors] if self.float_model else None,
            "vs_labels": self.labels.to_dict(self.class_names) if self.labels else None,
            "memory": self.memory,
            "samples_per_second": self.ran / self.seconds if self.seconds else None,
            "reference_seconds": self.reference_seconds,
            "link": self.link,
        }


def _float_inputs(dataset: Dataset, float_model: str | Path) -> list[list[np.ndarray]]:
    """The dataset's real numbers as the float model's inputs, checked against them."""
    specs = tensor_specs(float_model)
    if len(specs) != len(dataset.real[0]):
        raise DatasetError(f"--float {float_model}: {len(specs)} inputs, but the deployed model "
                           f"has {len(dataset.real[0])}; give the float model it was made from")
    for k, (spec, value) in enumerate(zip(specs, dataset.real[0])):
        if not spec.dtype.startswith("float"):
            raise DatasetError(f"--float {float_model}: input {k} '{spec.name}' is {spec.dtype}, "
                               "not float; give the float model the deployed one was "
                               "quantized from")
        if int(np.prod(spec.shape)) != value.size:
            raise DatasetError(f"--float {float_model}: input {k} '{spec.name}' has shape "
                               f"{list(spec.shape)}, the deployed model's {list(value.shape)}")
    return [[v.astype(spec.dtype).reshape(spec.shape) for v, spec in zip(sample, specs)]
            for sample in dataset.real]


def _memory(build) -> dict[str, Any]:
    if build is None:
        return {}
    size = build.size or {}
    return {"totals": size.get("totals", {}), "fits": size.get("fits", True),
            "regions": [{k: r.get(k) for k in ("name", "used", "length", "percent", "over")}
                        for r in size.get("regions", [])]}


def validation_board(board, folder: str | Path):
    """The board validate builds its firmware for: an emulated Arm board with its console moved
    from the UART to semihosting (microbuild/device/runners/qemu.py), which QEMU serves a whole
    buffer at a time: uploading a 96x96 image takes milliseconds instead of seconds. Any other
    board as it is."""
    if supports_semihosting_console(board):
        try:
            return semihosting_console_board(board, Path(folder) / "board")
        except BoardError:
            pass  # a board file off the search path: its own UART console, slower but the same
    return board


def validate(board, model: str | Path, data: str | Path, labels: str | Path | None = None,
             float_model: str | Path | None = None, limit: int | None = None, seed: int = 0,
             preprocess: str | Callable | None = None, max_samples: int = DEFAULT_MAX_SAMPLES,
             firmware=None, out_dir: str | Path | None = None, runner: str | None = None,
             port: str | None = None, timeout: float = 10.0, flash: bool = True,
             device=None, progress: Callable[[int, int], None] | None = None,
             on_log: Callable[[str], None] | None = None,
             build_options: dict[str, Any] | None = None) -> ValidationReport:
    """Run ``data`` through ``model`` on ``board`` over RPC and through TFLM, and report.

    ``firmware``: an RPC FirmwareBuild with the model, or a function that builds one (called
    once the data passed its checks; default: built now into ``out_dir``/BOARD-validate, for
    ``validation_board(board)``);
    ``device``: an already connected Device to use instead (nothing is started). ``progress``
    is called with (samples done, samples) after each sample. A sample the device fails is
    recorded in ``report.failures`` and the run goes on; Ctrl-C ends the run and returns what
    was measured, with ``report.interrupted`` set."""
    board = resolve_board(board)
    model = Path(model)
    if not model.is_file():
        raise MicrobuildError(f"--model {model}: no such file")
    specs = tensor_specs(model)
    out_specs = tensor_specs(model, "outputs")
    dataset = load_dataset(data, specs, labels=labels, limit=limit, seed=seed,
                           preprocess=preprocess, max_samples=max_samples)
    float_sets = _float_inputs(dataset, float_model) if float_model else None
    # The references first: a model TFLM cannot run fails here, not after the board started.
    started = time.perf_counter()
    expected = list(tflm_outputs_many(model, dataset.samples))
    float_outputs = list(tflm_outputs_many(float_model, float_sets)) if float_sets else None
    if float_outputs is not None and len(float_outputs[0]) != len(out_specs):
        raise DatasetError(f"--float {float_model}: {len(float_outputs[0])} outputs, but the "
                           f"deployed model has {len(out_specs)}")

    report = ValidationReport(board.name, str(model), dataset.source, len(dataset),
                              float_model=str(float_model) if float_model else None,
                              class_names=dataset.classes,
                              reference_seconds=time.perf_counter() - started)
    report.float_errors = [OutputError(k, s.name) for k, s in enumerate(out_specs)]
    if dataset.labels is not None:
        classes = max(int(np.prod(out_specs[0].shape)), int(dataset.labels.max()) + 1)
        report.labels = LabelScore(classes)

    if device is None:
        if callable(firmware):  # built only now that the data is known to be good
            firmware = firmware()
        elif firmware is None:
            folder = Path(out_dir or "build") / f"{board.name}-validate"
            firmware = build_firmware(validation_board(board, folder), [model], folder,
                                      executor="rpc", **(build_options or {}))
        report.memory = _memory(firmware)
        with connect(board, firmware, runner=runner, port=port, timeout=timeout,
                         flash=flash, on_log=on_log) as dev:
            _run(dev, str(model), dataset, expected, float_outputs, out_specs, report, progress)
    else:
        report.memory = _memory(firmware)
        _run(device, str(model), dataset, expected, float_outputs, out_specs, report, progress)
    return report


def _run(dev, model: str, dataset: Dataset, expected, float_outputs, out_specs,
         report: ValidationReport, progress) -> None:
    prefix = dev.models[0] if len(dev.models) == 1 else model
    report.timer_hz = dev.info.timer_hz
    report.latency_kind = duration(0, dev.info.timer_hz or 1, dev.board).kind
    start = time.perf_counter()
    try:
        for i, sample in enumerate(dataset.samples):
            try:
                outputs, ticks = dev.run_timed(prefix, sample)
            except TransportClosedError as err:
                report.failures.append(SampleFailure(i, dataset.names[i], str(err)))
                report.interrupted = True  # the device is gone: nothing more can run
                break
            except DeviceError as err:
                report.failures.append(SampleFailure(i, dataset.names[i], str(err)))
                if progress:
                    progress(i + 1, len(dataset))
                continue
            report.ticks.append(ticks)
            same = all(got.dtype == want.dtype and np.array_equal(got, np.reshape(want, got.shape))
                       for got, want in zip(outputs, expected[i]))
            if same:
                report.identical += 1
            else:
                report.differing.append(i)
            deployed = [dequantize(o, s) for o, s in zip(outputs, out_specs)]
            if float_outputs is not None:
                for k, (d, f) in enumerate(zip(deployed, float_outputs[i])):
                    report.float_errors[k].add(d, np.asarray(f))
            if report.labels is not None:
                report.labels.add(int(dataset.labels[i]), int(np.argmax(deployed[0])),
                                  int(np.argmax(float_outputs[i][0]))
                                  if float_outputs is not None else None)
            if progress:
                progress(i + 1, len(dataset))
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        report.seconds = time.perf_counter() - start
        stats = dev.client.stats
        report.link = {"requests": stats.requests, "retransmissions": stats.retransmissions}
