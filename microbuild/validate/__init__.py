"""`microbuild validate`: a dataset through the model as deployed on a board, against TFLM, the
float model and the labels (dataset: reading and converting samples; run: the device loop;
metrics: the figures; report: terminal-independent JSON and the HTML page)."""

from microbuild.validate.dataset import Dataset, DatasetError, load_dataset
from microbuild.validate.run import SampleFailure, ValidationReport, validate

__all__ = ["Dataset", "DatasetError", "SampleFailure", "ValidationReport", "load_dataset",
           "validate"]
