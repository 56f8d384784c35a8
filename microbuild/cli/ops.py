"""`microbuild ops`: every TFLM operator and what microbuild does with it."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from microbuild.cli.console import out


def cmd_ops(args: argparse.Namespace) -> int:
    from microbuild.compiler.op_table import markdown_table, operator_rows

    rows = operator_rows()
    if args.markdown:
        print(markdown_table(rows))
        return 0
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    table = Table(title="TFLite builtin operators (TFLM's set) in microbuild", title_justify="left")
    for column in ("operator", "microbuild", "run-time types", "folded when constant",
                   "fast variants"):
        table.add_column(column)
    for r in rows:
        table.add_row(r.opcode, r.status + ("" if r.in_tflm else " (not in TFLM)"),
                      ", ".join(r.dtypes), "yes" if r.folds else "", ", ".join(r.variants))
    out.print(table)
    return 0


def add_parser(commands) -> None:
    p = commands.add_parser("ops", help="every TFLM operator and what microbuild does with it")
    p.add_argument("--markdown", action="store_true", help="as the README's Markdown table")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=cmd_ops)
