"""`microbuild update`: a new model into a board's model slot, the firmware untouched
(docs/model-blob.md): packed first when given a .tflite, then written with the board's flash
runner, or, on an emulated board, booted in QEMU with the blob in the slot."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from microbuild import api
from microbuild.device.model_update import update
from microbuild.cli.console import out
from microbuild.errors import MicrobuildError


def cmd_update(args: argparse.Namespace) -> int:
    if args.model:
        if not args.firmware:
            raise MicrobuildError("--model is packed against the firmware's kernel set: give the "
                                  "table firmware's ELF (--firmware F.elf), or pack it yourself "
                                  "(`microbuild pack`) and pass --blob")
        with tempfile.TemporaryDirectory(prefix="mb-update-") as tmp:
            blob = api.pack(args.firmware, args.model, Path(tmp) / "model.mbm",
                            int(time.time())).blob
    else:
        path = Path(args.blob)
        if not path.is_file():
            raise MicrobuildError(f"--blob {args.blob}: no such file")
        blob = path.read_bytes()
    done = update(args.board, blob, args.slot, args.firmware, args.runner)
    out.print(f"model slot {done.slot} at {done.address:#010x}: {done.bytes:,} bytes written "
              f"($ {' '.join(done.command)})", soft_wrap=True, markup=False)
    if done.console:
        out.print(done.console.rstrip(), soft_wrap=True, markup=False, highlight=False)
    return 0 if done.status == 0 else 1


def add_parser(commands) -> None:
    p = commands.add_parser("update", help="write a new model blob into a board's model slot")
    p.add_argument("--board", required=True, help="the board (its YAML places the model slots)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="a .tflite model, packed for --firmware first")
    what.add_argument("--blob", help="a blob from `microbuild pack`")
    p.add_argument("--firmware", help="the table firmware's ELF: what --model is packed for, what "
                                      "the blob is checked against, and what an emulated board "
                                      "boots")
    p.add_argument("--slot", type=int, help="which model slot to write (required when the board "
                                            "has two: write the one not running now)")
    p.add_argument("--runner", help="the flash runner (default: the board's first)")
    p.set_defaults(func=cmd_update)
