"""The tuning room: measure kernel variants on the device and remember the fastest correct one.

``log`` is the JSON log (CPU + op signature -> best variant) the compiler reads; ``tuner`` builds
candidate firmware, times it on the board over RPC and writes the log.
"""

from microbuild.tuning.log import TuningLog, TuningLogError

__all__ = ["TuningLog", "TuningLogError"]
