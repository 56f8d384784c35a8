"""microbuild: int8 TFLite models to C, firmware for YAML-defined boards, flash and run."""

__version__ = "0.1.0"
