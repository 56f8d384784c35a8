"""The boards room: board YAML files -> validated :class:`Board` objects.

Board files are the single source of truth for a board; nothing in microbuild says
"if board == ...". See ``loader`` for the search path and ``extends:``.
"""

from microbuild.boards.board import Board, FlashRunner, MemoryRegion, Toolchain
from microbuild.boards.yaml_dump import board_yaml
from microbuild.boards.loader import (available_boards, board_schema, check_board_file, list_boards,
                                      load_board, load_board_file, scan_boards, search_path)
from microbuild.boards.resolver import resolve_board
from microbuild.boards.sizes import format_size, parse_size
from microbuild.boards.source import Problem

__all__ = ["Board", "FlashRunner", "MemoryRegion", "Problem", "Toolchain", "available_boards",
           "board_schema", "board_yaml", "check_board_file", "format_size", "list_boards",
           "load_board", "load_board_file", "parse_size", "resolve_board", "scan_boards",
           "search_path"]
