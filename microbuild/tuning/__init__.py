"""The tuning room: measure kernel variants on the device and remember the fastest correct one.

The JSON log (CPU + op signature -> best variant) is the compiler's input, so its format lives
below, in ``microbuild.compiler.tuning_log``; ``tuner`` builds candidate firmware, times it on the
board over RPC and writes the log. ``float_reorder`` measures, the same way, how far kernels that
reorder float sums (``--allow-float-reorder``) move a model's outputs from TFLM's.
"""

from microbuild.compiler.tuning_log import TuningLog, TuningLogError

__all__ = ["TuningLog", "TuningLogError"]
