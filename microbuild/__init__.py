"""microbuild: int8 TFLite models to C, firmware for YAML-defined boards, flash and run.

This package is also microbuild's SCons tool, so a user's SConstruct can say

    import microbuild
    env = Environment(tools=["default", "microbuild"], toolpath=[microbuild.SCONS_TOOLPATH])

(see SConstruct.example and microbuild/firmware/scons_tool.py for the builders it adds).
"""

from pathlib import Path as _Path

__version__ = "0.1.0"

# The directory holding this package: as an SCons toolpath it makes `tools=["microbuild"]` find
# this package, whose generate()/exists() below delegate to microbuild.firmware.scons_tool.
SCONS_TOOLPATH = str(_Path(__file__).resolve().parent.parent)


def generate(env):
    """SCons tool entry point (env.Tool('microbuild'))."""
    from microbuild.firmware.scons_tool import generate as _generate

    _generate(env)


def exists(env):
    """SCons tool entry point: the tool needs nothing beyond microbuild itself."""
    return True


def connect(board, firmware, **options):
    """Start an RPC firmware on ``board`` and return a connected Device (see
    microbuild.device.device.connect): ``with microbuild.connect(b, fw) as dev: dev.run(m, x)``."""
    from microbuild.api import connect as _connect

    return _connect(board, firmware, **options)


def __getattr__(name):
    """``microbuild.api`` without importing it first (the README's examples say
    ``microbuild.api.build_firmware(...)``); loaded on first use so that SCons, which imports this
    package as its tool, does not pay for the whole API."""
    if name == "api":
        import importlib

        return importlib.import_module("microbuild.api")
    raise AttributeError(f"module 'microbuild' has no attribute {name!r}")
