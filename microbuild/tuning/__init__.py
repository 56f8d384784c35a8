"""The tuning room: measure kernel variants on the device and remember the fastest correct one.

The JSON log (CPU + op signature -> best variant) is the compiler's input, so its format lives
below, in ``microbuild.compiler.tuning_log``; ``tuner`` builds candidate firmware, times it on the
board over RPC and writes the log.
"""

from microbuild.compiler.tuning_log import TuningLog, TuningLogError

__all__ = ["TuningLog", "TuningLogError"]
