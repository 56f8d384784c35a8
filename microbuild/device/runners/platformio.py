"""PlatformIO (pip package `platformio`, microbuild's `platformio` extra): flashes a generated
PlatformIO project with ``pio run -d <project> -e <env> -t upload``, which builds the project and
uploads it with the upload tool PlatformIO's board uses (st-link/openocd, jlink, avrdude, ...).

The project is not the firmware microbuild built: `microbuild generate --format platformio`
writes one. It is given by ``PlatformioRunner(board, project_dir=...)`` (the ``project_dir``
attribute) or the runner args.

Runner args:
  project_dir  the PlatformIO project (the folder with platformio.ini)
  env          the environment (-e); default: the only [env:...] of platformio.ini, else the
               board's name
  upload_port  the serial port or probe for the upload (--upload-port)
  program      the pio executable (name or path)
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from microbuild.boards import Board
from microbuild.device.runners.avrdude import AvrdudeRunner
from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    board_usb,
    module_command,
)
from microbuild.device.runners.jlink import JlinkRunner
from microbuild.device.runners.openocd import OpenocdRunner
from microbuild.device.runners.pyocd import PyocdRunner
from microbuild.device.runners.stlink import StlinkRunner

_ENV = re.compile(r"^\s*\[env:([^\]]+)\]", re.MULTILINE)
_GENERATE = "microbuild generate --format platformio"


def _upload_tool_patterns() -> tuple[tuple[str, str], ...]:
    """The failure patterns of the tools PlatformIO uploads with, those PlatformIO's runner knows
    how to describe (the tool-specific kinds are left to those runners)."""
    generic = {"usb-permission", "no-probe", "target", "file-not-found"}
    return tuple((pattern, kind)
                 for runner in (StlinkRunner, OpenocdRunner, JlinkRunner, PyocdRunner,
                                AvrdudeRunner)
                 for pattern, kind in runner.failure_patterns if kind in generic)


class PlatformioRunner(FlashToolRunner):
    name = "platformio"
    arguments = (
        RunnerArg("project_dir", (str,), "the PlatformIO project (the folder with platformio.ini)"),
        RunnerArg("env", (str,), "the environment (-e)"),
        RunnerArg("upload_port", (str,), "the serial port or probe for the upload"),
    )
    pypi_packages = ("platformio",)
    program = "pio"
    install_hint = ("install PlatformIO into the Python environment microbuild runs in: "
                    "pip install platformio (or pip install 'microbuild[platformio]')")
    failure_patterns = (
        (r"Not a PlatformIO project", "not-a-project"),
        (r"Unknown environment names? '?([^'\n]+)'?", "unknown-env"),
        (r"HTTPClientError|Could not install (?:package|platform)|Unknown development platform"
         r"|UnknownPackageError|PackageException|Failed to establish a new connection",
         "platform-install"),
        (r"Please specify [`']?upload_port|No serial port found|Error: Please specify",
         "no-probe"),
        *_upload_tool_patterns(),
    )

    def __init__(self, board: Board, args: dict[str, Any] | None = None,
                 project_dir: str | Path | None = None):
        super().__init__(board, args)
        given = project_dir or self.args.get("project_dir")
        #: the PlatformIO project to upload (the folder with platformio.ini), or None
        self.project_dir: Path | None = Path(given) if given else None

    def fallback_command(self) -> list[str] | None:
        if self.program_name != self.program:
            return None
        # `platformio` is the same program as `pio`, under its long name.
        found = shutil.which("platformio")
        if found:
            return [found]
        beside = Path(sys.executable).parent / "platformio"
        if beside.is_file():
            return [str(beside)]
        return module_command("platformio")

    def project(self) -> Path:
        if self.project_dir is None:
            raise FlashError(
                f"board '{self.board.name}': runner platformio flashes a PlatformIO project, and "
                f"none was given. Generate one for this board with `{_GENERATE}` and pass its "
                f"folder (the runner's project_dir, `project_dir` in its args)"
                f"{self._others_hint()}")
        return self.project_dir

    def env(self) -> str:
        if self.args.get("env"):
            return str(self.args["env"])
        ini = self.project() / "platformio.ini"
        if ini.is_file():
            envs = _ENV.findall(ini.read_text(errors="replace"))
            if len(envs) == 1:
                return envs[0].strip()
        return self.board.name

    def check_image(self, image: FirmwareImage) -> None:
        project = self.project()
        if not (project / "platformio.ini").is_file():
            what = "does not exist" if not project.exists() else "has no platformio.ini"
            raise self._error(
                Diagnosis("file-not-found", f"file not found: the PlatformIO project {project} "
                          f"{what}", f"generate a project for board {self.board.name} with "
                          f"`{_GENERATE}` and pass its folder"),
                command=None, returncode=None, output=None)

    def image_file(self, image: FirmwareImage) -> Path:
        return self.project() / "platformio.ini"

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "run", "-d", str(self.project().resolve()), "-e", self.env(),
                   "-t", "upload"]
        if self.args.get("upload_port"):
            command += ["--upload-port", str(self.args["upload_port"])]
        return command

    def probe_description(self) -> str:
        pio_board = (self.board.platformio or {}).get("board", self.board.name)
        ids = board_usb(self.board)
        where = f" (USB {ids})" if ids else ""
        return (f"the upload probe or port of PlatformIO's board {pio_board}{where}, as its "
                f"upload_protocol selects")

    def describe(self, kind, image, match):
        project = self.project_dir
        if kind == "not-a-project":
            return Diagnosis(kind, f"{project} is not a PlatformIO project",
                             f"generate one for board {self.board.name} with `{_GENERATE}`")
        if kind == "unknown-env":
            return Diagnosis(kind, f"the project has no environment {match.group(1).strip()}",
                             f"set `env` in the runner's args to one of the [env:...] sections "
                             f"of {project}/platformio.ini")
        if kind == "platform-install":
            return Diagnosis(kind, "PlatformIO could not install the platform or tools the "
                             "project needs",
                             f"PlatformIO downloads them the first time: run `pio pkg install "
                             f"-d {shlex.quote(str(project))}` on a machine with internet access, then again")
        return super().describe(kind, image, match)
