"""The tuning log: measured kernel variants, keyed by CPU and operator signature.

One JSON file, reusable across models (an op signature is the op's shapes and loop-shaping
options, not its weights) and merged across runs (a new measurement of the same CPU and signature
replaces the old one; everything else is kept):

    {
      "format": "microbuild-tuning",
      "version": 1,
      "cpus": {
        "cortex-m7": {
          "CONV_2D 1x25x5x64 const:64x1x1x64 const:64 -> 1x25x5x64 {...}": {
            "best": "dsp",
            "candidates": {"reference": {"ticks": 61957, "correct": true}, "dsp": {...}},
            "timer_hz": 25000000, "board": "mps2-an500", "board_kind": "emulated",
            "model": "ds_cnn.tflite",
            "warmup": 1, "repeat": 5, "measured": "2026-11-21T10:00:00Z"
          }
        }
      }
    }

``ticks`` is the median of the repeats, in the board timer's ticks. ``board_kind`` says what
the board measured on was: "emulated" (QEMU, simavr: instruction counts, no caches or wait
states), "real" hardware, or the "host" process; logs written before it existed lack it, and
nothing is assumed about them.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microbuild.errors import MicrobuildError

FORMAT = "microbuild-tuning"
VERSION = 1


BOARD_KINDS = ("emulated", "real", "host")


def board_kind(board) -> str:
    """What a measurement on ``board`` is worth: "host", "emulated" or "real"."""
    return "host" if board.is_host else "emulated" if board.is_emulated else "real"


class TuningLogError(MicrobuildError):
    """A tuning log that cannot be read."""


@dataclass
class TuningLog:
    cpus: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    path: Path | None = None

    # ---- reading -------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> "TuningLog":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise TuningLogError(f"{path}: no such tuning log (make one with `microbuild tune "
                                 "--board B --model M --log "
                                 f"{shlex.quote(str(path))}`)") from None
        except (OSError, UnicodeDecodeError) as err:
            raise TuningLogError(f"{path}: cannot read the tuning log: {err}") from None
        except json.JSONDecodeError as err:
            raise TuningLogError(f"{path}:{err.lineno}:{err.colno}: not valid JSON: "
                                 f"{err.msg}") from None
        return cls.from_dict(data, path)

    @classmethod
    def load_or_empty(cls, path: str | Path) -> "TuningLog":
        path = Path(path)
        return cls.load(path) if path.exists() else cls(path=path)

    @classmethod
    def from_dict(cls, data: Any, path: Path | None = None) -> "TuningLog":
        where = str(path) if path else "tuning log"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TuningLogError(f"{where}: not a microbuild tuning log (expected "
                                 f'"format": "{FORMAT}" at the top level)')
        if data.get("version") != VERSION:
            raise TuningLogError(f"{where}: tuning log version {data.get('version')!r}; this "
                                 f"microbuild reads version {VERSION}; tune again")
        cpus = data.get("cpus")
        if not isinstance(cpus, dict):
            raise TuningLogError(f'{where}: "cpus" must be an object of CPU name -> entries')
        for cpu, entries in cpus.items():
            if not isinstance(entries, dict):
                raise TuningLogError(f'{where}: cpus.{cpu} must be an object of op signature '
                                     '-> entry')
            for signature, entry in entries.items():
                if not isinstance(entry, dict) or not isinstance(entry.get("best"), str):
                    raise TuningLogError(f'{where}: cpus.{cpu}["{signature}"] has no "best" '
                                         "variant name")
        return cls(cpus={k: dict(v) for k, v in cpus.items()}, path=path)

    def best(self, cpu: str, signature: str) -> str | None:
        entry = self.cpus.get(cpu, {}).get(signature)
        return entry["best"] if entry else None

    def entry(self, cpu: str, signature: str) -> dict[str, Any] | None:
        return self.cpus.get(cpu, {}).get(signature)

    def emulator_warning(self, board, cpu: str) -> str | None:
        """A warning when this log's measurements for ``cpu`` were made on an emulator and are
        about to choose kernels for ``board``, real hardware; None otherwise (also for entries
        that do not say where they were measured)."""
        if board_kind(board) != "real":
            return None
        emulated = [e for e in self.cpus.get(cpu, {}).values()
                    if e.get("board_kind") == "emulated"]
        if not emulated:
            return None
        boards = sorted({str(e.get("board", "?")) for e in emulated})
        where = f"{self.path}: " if self.path else ""
        return (f"{where}{len(emulated)} of its {cpu} measurements were made on an emulator "
                f"({', '.join(boards)}), and {board.name} is real hardware: an emulator counts "
                "instructions and models no caches, flash wait states or bus contention, so its "
                f"fastest variants may not be the board's. Tune on the board itself "
                f"(`microbuild tune --board {board.name} --model M.tflite --log "
                f"{shlex.quote(str(self.path or 'tune.json'))}`)")

    def __len__(self) -> int:
        return sum(len(v) for v in self.cpus.values())

    # ---- writing -------------------------------------------------------------------------------
    def record(self, cpu: str, signature: str, entry: dict[str, Any]) -> None:
        if not isinstance(entry.get("best"), str):
            raise ValueError("a tuning entry needs its best variant")
        self.cpus.setdefault(cpu, {})[signature] = entry

    def merge(self, other: "TuningLog") -> None:
        """Take every entry of ``other``, replacing ours for the same CPU and signature."""
        for cpu, entries in other.cpus.items():
            for signature, entry in entries.items():
                self.record(cpu, signature, entry)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "cpus": {cpu: dict(sorted(entries.items()))
                         for cpu, entries in sorted(self.cpus.items())}}

    def save(self, path: str | Path | None = None) -> Path:
        """Write atomically (a temporary file renamed over the log), merged with whatever the file
        holds now: two tuning runs writing the same log both keep their entries."""
        path = Path(path or self.path or "tune.json")
        merged = TuningLog.load_or_empty(path)
        merged.merge(self)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        # mkstemp makes the file private (0600); a log is shared like any other file (the
        # permissions a plain open() gives under the user's umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w") as f:
            json.dump(merged.to_dict(), f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
        self.cpus = merged.cpus
        self.path = path
        return path
