"""The fit report a generated Zephyr application prints at the end of `west build` (a POST_BUILD
step on zephyr_final in its CMakeLists.txt):

    <python> -m microbuild.project.zephyr_fit board/<board>.yaml build/zephyr/zephyr.elf

prints how full each of the board's memory regions is with the ELF (the table `scons size`
prints), writes it as JSON to microbuild.size.json beside the ELF, and exits with status 1 and
microbuild's fit error (which region, how many bytes over, what to do) when it does not fit.
Zephyr's own sections are attributed to the board's regions by their addresses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from microbuild.boards import load_board
from microbuild.errors import MicrobuildError
from microbuild.firmware.fit import TABLE_HEADER, analyze_elf, fit_error


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python -m microbuild.project.zephyr_fit BOARD.yaml ELF\n")
        return 2
    board_file, elf = argv
    try:
        board = load_board(board_file)
        if not Path(elf).is_file():
            raise MicrobuildError(f"{elf}: no such ELF file (the link did not produce it)")
        report = analyze_elf(elf, board)
    except MicrobuildError as err:
        sys.stderr.write(f"microbuild: {err}\n")
        return 1
    document = report.to_dict()
    if not report.fits:
        document["fit_error"] = str(fit_error(report))
    (Path(elf).parent / "microbuild.size.json").write_text(json.dumps(document, indent=1) + "\n")
    rows = [TABLE_HEADER, *report.table_rows()]
    widths = [max(len(str(row[k])) for row in rows) for k in range(len(TABLE_HEADER))]
    print(f"microbuild: {Path(elf).name} on board {board.name}")
    for row in rows:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    if not report.fits:
        sys.stderr.write(f"microbuild: {fit_error(report)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
