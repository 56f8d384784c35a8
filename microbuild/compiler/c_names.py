"""How names become C: the identifier rule for a model's prefix and string literals.

Shared by the compiler (which refuses a prefix that is not an identifier), the SCons tool, the
build API, the project generators and the RPC table, so they all name a model the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
}


def is_c_identifier(name: object) -> bool:
    """True for a C identifier that is not a keyword: usable as a prefix of generated symbols."""
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None \
        and name not in C_KEYWORDS


def model_prefix(path: str | Path) -> str:
    """A C prefix from a model's file name: ds_cnn.tflite -> ds_cnn, 2-layer.tflite -> m_2_layer."""
    stem = re.sub(r"[^a-z0-9_]", "_", Path(path).stem.lower()) or "model"
    if stem[0].isdigit():
        stem = "m_" + stem
    return stem + "_model" if stem in C_KEYWORDS else stem


def c_string(text: str) -> str:
    """``text`` as a C string literal (backslashes and double quotes escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
