"""What the last `microbuild build` produced for each board, so that `flash`, `monitor`, `debug`
and `run --no-flash` act on that firmware without being told again.

One small JSON file per board in the build folder (``build/last-build/<board>.json``): the ELF,
its executor, toolchain, models and build id, and when it was built. Whichever executor was built
last is the one recorded (an AOT build after an RPC one is what gets flashed).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microbuild.errors import MicrobuildError
from microbuild.firmware.note import read_note
from microbuild.firmware.build import load_firmware_build

BUILD_ROOT = Path("build")  # the CLI's build folder, relative to where microbuild runs
FOLDER = "last-build"


@dataclass
class LastBuild:
    board: str
    elf: Path
    executor: str
    toolchain: str
    models: list[dict[str, str]]  # {"prefix", "model"} in firmware order
    build_id: str | None
    built_at: float  # seconds since the epoch
    out_dir: Path

    def to_dict(self) -> dict[str, Any]:
        return {"board": self.board, "elf": str(self.elf), "executor": self.executor,
                "toolchain": self.toolchain, "models": self.models, "build_id": self.build_id,
                "built_at": self.built_at, "out_dir": str(self.out_dir)}


def record_path(board: str, root: str | Path = BUILD_ROOT) -> Path:
    return Path(root) / FOLDER / f"{board}.json"


def record(build, root: str | Path = BUILD_ROOT) -> LastBuild:
    """Remember ``build`` (a FirmwareBuild) as the board's last build."""
    note = read_note(build.elf)
    last = LastBuild(board=build.board.name, elf=Path(build.elf).resolve(),
                     executor=build.executor, toolchain=build.toolchain,
                     models=[{"prefix": m["prefix"], "model": m.get("model", "")}
                             for m in build.models],
                     build_id=note.build_id if note else None, built_at=time.time(),
                     out_dir=Path(build.out_dir).resolve())
    path = record_path(last.board, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(last.to_dict(), indent=1) + "\n")
    return last


def find(board: str, root: str | Path = BUILD_ROOT) -> LastBuild | None:
    """The board's last build, or None when nothing was built for it here (or its ELF is gone)."""
    path = record_path(board, root)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        last = LastBuild(board=data["board"], elf=Path(data["elf"]), executor=data["executor"],
                         toolchain=data["toolchain"], models=list(data["models"]),
                         build_id=data.get("build_id"), built_at=float(data["built_at"]),
                         out_dir=Path(data["out_dir"]))
    except (ValueError, KeyError, TypeError) as err:
        raise MicrobuildError(f"{path}: the record of the last build cannot be read ({err}); "
                              f"delete it and build again") from None
    return last if last.elf.is_file() else None


def firmware_at(elf: str | Path, board):
    """The FirmwareBuild of an ELF microbuild built (found from its note: the models' summaries
    are in ``<name>.src/`` next to it). None when the ELF has no note or its folder has no
    summaries (a firmware copied away from its build folder)."""
    elf = Path(elf)
    note = read_note(elf)
    if note is None:
        return None
    name = elf.stem if elf.suffix == ".elf" else elf.name
    try:
        return load_firmware_build(board, elf.parent, name, note.models, note.toolchain,
                                   note.executor)
    except (OSError, ValueError):
        return None
