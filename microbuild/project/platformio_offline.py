"""A PlatformIO core folder that builds microbuild's projects with no network.

`pio run` always wants the core package `tool-scons`, which it downloads from PlatformIO's registry
the first time; with no network it retries for about a minute and fails with a bare
`HTTPClientError:`. microbuild's own PlatformIO platform needs nothing else, so a core folder that
already holds `tool-scons` (a link to a two-file shim running the SCons installed with microbuild)
builds every generated project offline. ``seed_offline_core`` writes such a folder (again and
again: it only fills in what is missing); ``offline_environment`` is the environment `pio` runs
with it, which also switches off telemetry and the weekly upgrade check (about 62 s offline).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Where `microbuild generate --build` keeps the core of a PlatformIO project when the environment
# names none: inside the project's own build folder, which PlatformIO users already ignore.
PROJECT_CORE = ".pio/microbuild-core"

_SHIM = "import sys\n\nfrom SCons.Script.Main import main\n\nsys.exit(main())\n"


def seed_offline_core(core: str | Path) -> Path:
    """Make ``core`` a PlatformIO core folder with `tool-scons` in place; returns its path."""
    from platformio import __version__ as pio_version
    from platformio.dependencies import get_core_dependencies

    core = Path(core).resolve()
    shim = core / "microbuild-tool-scons"
    (core / "packages").mkdir(parents=True, exist_ok=True)
    shim.mkdir(exist_ok=True)
    # The version PlatformIO asks for (e.g. "~4.41101.0"), so it takes the shim as satisfying it.
    version = get_core_dependencies()["tool-scons"].lstrip("~^=<> ")
    _write(shim / "package.json", json.dumps({"name": "tool-scons", "version": version,
                                              "system": "*"}))
    _write(shim / "scons.py", _SHIM)
    _write(core / "packages" / "tool-scons.pio-link", json.dumps(
        {"cwd": "/", "spec": {"owner": "platformio", "id": None, "name": "tool-scons",
                              "requirements": None, "uri": f"symlink://{shim}"}}))
    state = core / "appstate.json"
    if not state.is_file():
        _write(state, json.dumps({"last_version": pio_version,
                                  "settings": {"check_platformio_interval": 3650}}))
    return core


def offline_environment(core: str | Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with `pio` pointed at ``core``, quietly."""
    result = dict(os.environ if env is None else env)
    result.update(PLATFORMIO_CORE_DIR=str(core), PLATFORMIO_SETTING_ENABLE_TELEMETRY="No",
                  PLATFORMIO_DISABLE_UPGRADE_CHECK="true")
    return result


def _write(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
