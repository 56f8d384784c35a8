"""Forced kernel variants written as text (``CONV_2D=dsp``, ``*=reference``, ``3=reference``), as
`--variant` and a generated project's settings give them, checked against the operator registry.

It lives in the compiler, not the CLI, because a generated project's build (project.buildtime)
reads the same text with no command line around it.
"""

from __future__ import annotations

from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.variants import FLOAT_REORDER_KEY
from microbuild.errors import MicrobuildError


def parse_variants(items: list[str]) -> dict[str, str]:
    """``["CONV_2D=dsp", "*=reference"]`` -> ``{"CONV_2D": "dsp", "*": "reference"}``; an op
    index (``3=reference``) forces one op."""
    forced: dict[str, str] = {}
    for item in items:
        opcode, sep, name = item.partition("=")
        opcode, name = opcode.strip().upper(), name.strip()
        if not sep or not opcode or not name:
            raise MicrobuildError(f"--variant {item}: write OPCODE=NAME, e.g. CONV_2D=dsp or "
                                  "'*=reference'")
        if opcode == FLOAT_REORDER_KEY.upper():  # --allow-float-reorder, as a project writes it
            forced[FLOAT_REORDER_KEY] = name
            continue
        if opcode != "*" and not opcode.isdigit() and opcode not in REGISTRY:
            raise MicrobuildError(f"--variant {item}: unknown operator {opcode}; operators with "
                                  "variants: " + ", ".join(sorted(
                                      k for k, v in REGISTRY.items() if v.variants)))
        forced[opcode] = name
    return forced
