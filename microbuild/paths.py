"""Where microbuild's non-Python files are, found relative to the package."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def runtime_dir() -> Path:
    """The C runtime (``runtime/``: kernels, headers): next to the package in a checkout or an
    editable install, or shipped inside the package as ``microbuild/runtime``."""
    for candidate in (_PACKAGE.parent / "runtime", _PACKAGE / "runtime"):
        if (candidate / "include" / "microbuild").is_dir():
            return candidate
    raise FileNotFoundError(
        f"microbuild's C runtime was not found next to {_PACKAGE} (looked for ../runtime and "
        "./runtime); reinstall microbuild")
