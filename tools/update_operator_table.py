"""Rewrite the README's operator table from the operator lowerings (``microbuild ops --markdown``).

    .venv/bin/python tools/update_operator_table.py

tests/compiler/test_op_table.py fails while the README's table differs from what this writes.
"""

from pathlib import Path

from microbuild.compiler.op_table import replace_in_readme

README = Path(__file__).resolve().parent.parent / "README.md"

if __name__ == "__main__":
    README.write_text(replace_in_readme(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"updated the operator table in {README}")
