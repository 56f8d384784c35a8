"""The figures of a validation run, accumulated sample by sample so that a run cut short
(Ctrl-C, a device that went away) still reports what it measured."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HISTOGRAM_BINS = 20


def histogram(values: np.ndarray, bins: int = HISTOGRAM_BINS) -> dict[str, list]:
    """Counts over ``bins`` equal bins from the smallest to the largest value."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size == 0:
        return {"edges": [], "counts": []}
    low, high = float(values.min()), float(values.max())
    if high == low:
        high = low + 1.0
    counts, edges = np.histogram(values, bins=bins, range=(low, high))
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}


@dataclass
class OutputError:
    """One output of the deployed model (dequantized) against the float model's."""

    index: int
    name: str
    top1_agree: int = 0
    top1_total: int = 0  # samples compared by arg-max (outputs of more than one value)
    abs_sum: float = 0.0
    abs_max: float = 0.0
    square_sum: float = 0.0  # of the error
    signal_sum: float = 0.0  # of the float model's values
    dot: float = 0.0
    deployed_square_sum: float = 0.0
    count: int = 0  # values compared
    errors: list[np.ndarray] = field(default_factory=list)  # |error| per sample, for the histogram

    def add(self, deployed: np.ndarray, reference: np.ndarray) -> None:
        d = deployed.astype(np.float64).reshape(-1)
        f = reference.astype(np.float64).reshape(-1)
        e = d - f
        self.abs_sum += float(np.abs(e).sum())
        self.abs_max = max(self.abs_max, float(np.abs(e).max()))
        self.square_sum += float(e @ e)
        self.signal_sum += float(f @ f)
        self.dot += float(d @ f)
        self.deployed_square_sum += float(d @ d)
        self.count += d.size
        self.errors.append(np.abs(e))
        if d.size > 1:
            self.top1_total += 1
            self.top1_agree += int(np.argmax(d) == np.argmax(f))

    def to_dict(self) -> dict[str, Any]:
        n = max(self.count, 1)
        norms = math.sqrt(self.signal_sum * self.deployed_square_sum)
        return {
            "output": self.index, "name": self.name, "values": self.count,
            "top1_agreement": (self.top1_agree / self.top1_total) if self.top1_total else None,
            "mean_abs_error": self.abs_sum / n, "max_abs_error": self.abs_max,
            "rmse": math.sqrt(self.square_sum / n),
            "cosine": (self.dot / norms) if norms else None,
            # Signal over error power; infinite when they agree exactly.
            "snr_db": (10 * math.log10(self.signal_sum / self.square_sum)
                       if self.square_sum and self.signal_sum else
                       (math.inf if self.signal_sum else None)),
            "abs_error_histogram": histogram(np.concatenate(self.errors) if self.errors
                                             else np.zeros(0)),
        }


@dataclass
class LabelScore:
    """Accuracy against the labels, of the deployed model and of the float model, and the
    deployed model's confusion matrix (rows: label, columns: prediction)."""

    classes: int
    deployed_correct: int = 0
    float_correct: int = 0
    float_total: int = 0
    total: int = 0
    confusion: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.confusion = np.zeros((self.classes, self.classes), dtype=np.int64)

    def add(self, label: int, deployed: int, float_prediction: int | None) -> None:
        self.total += 1
        self.deployed_correct += int(deployed == label)
        if 0 <= label < self.classes and 0 <= deployed < self.classes:
            self.confusion[label, deployed] += 1
        if float_prediction is not None:
            self.float_total += 1
            self.float_correct += int(float_prediction == label)

    def to_dict(self, names: list[str]) -> dict[str, Any]:
        return {"samples": self.total,
                "deployed_accuracy": self.deployed_correct / self.total if self.total else None,
                "float_accuracy": (self.float_correct / self.float_total
                                   if self.float_total else None),
                "classes": names or [str(k) for k in range(self.classes)],
                "confusion": self.confusion.tolist()}
