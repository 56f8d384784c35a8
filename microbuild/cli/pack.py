"""`microbuild pack`: a model packed as a blob for a table-executor firmware (docs/model-blob.md),
refused here, with the list of what is missing, when that firmware could not run it."""

from __future__ import annotations

import argparse
import time

from microbuild import api
from microbuild.cli.console import out


def cmd_pack(args: argparse.Namespace) -> int:
    sequence = int(time.time()) if args.sequence is None else args.sequence
    packed = api.pack(args.firmware, args.model, args.output, sequence)
    out.print(f"wrote {packed.path}: {len(packed.blob):,} bytes, {packed.ops} ops, workspace "
              f"{packed.workspace_bytes:,} of the firmware's {packed.firmware_workspace_bytes:,} "
              "bytes", soft_wrap=True)
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("pack", help="pack a model as a blob for a table-executor firmware")
    p.add_argument("--firmware", required=True,
                   help="the firmware's ELF (from `microbuild build --executor table`): its "
                        ".note.microbuild says which kernels and how much workspace it has")
    p.add_argument("--model", required=True, help="the .tflite model to pack")
    p.add_argument("-o", "--output", required=True, help="the blob to write (.mbm)")
    p.add_argument("--sequence", type=int, default=None,
                   help="the blob's sequence number: of two valid blobs in a board's model slots "
                        "the firmware runs the higher (default: the time in seconds since 1970, "
                        "so a later pack is newer)")
    p.set_defaults(func=cmd_pack)
