"""`microbuild platformio-core`: seed a PlatformIO core folder that needs no network."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from microbuild.cli.console import err
from microbuild.errors import MicrobuildError


def cmd_platformio_core(args: argparse.Namespace) -> int:
    from microbuild.project.platformio_offline import seed_offline_core

    try:
        core = seed_offline_core(args.dir)
    except ImportError:
        raise MicrobuildError("PlatformIO is not installed in microbuild's Python: "
                              f"{sys.executable} -m pip install platformio") from None
    # The message on stderr, the export line alone on stdout: eval "$(microbuild platformio-core)".
    err.print(f"PlatformIO core folder ready, no network needed: {core}")
    print(f"export PLATFORMIO_CORE_DIR={shlex.quote(str(core))} "
          "PLATFORMIO_SETTING_ENABLE_TELEMETRY=No")
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("platformio-core",
                            help="seed a PlatformIO core folder so `pio run` needs no network")
    p.add_argument("dir", nargs="?", default=str(Path.home() / ".cache" / "microbuild" /
                                                 "platformio-core"),
                   help="the folder (default: ~/.cache/microbuild/platformio-core)")
    p.set_defaults(func=cmd_platformio_core)
