"""Where microbuild's non-Python files are, found relative to the package.

In a source checkout (or an editable install) ``runtime/``, ``board_defs/`` and
``project_templates/`` sit beside the package; a wheel carries them inside it as
``microbuild/runtime`` etc. (``setup.py`` copies them in when the wheel is built).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

# The name microbuild is published under (``pip install microbuild-mcu``; the command and the
# import stay ``microbuild``): "microbuild" on PyPI is an unrelated project.
DISTRIBUTION = "microbuild-mcu"


def _data_dir(name: str, marker: str) -> Path:
    """The folder ``name`` beside the package or inside it, whichever holds ``marker``."""
    for candidate in (_PACKAGE.parent / name, _PACKAGE / name):
        if any(candidate.glob(marker)):
            return candidate
    raise FileNotFoundError(
        f"microbuild's {name}/ was not found next to {_PACKAGE} (looked for ../{name} and "
        f"./{name}); reinstall microbuild (pip install {DISTRIBUTION})")


def runtime_dir() -> Path:
    """The C runtime (``runtime/``: kernels, headers, start-up code, drivers)."""
    return _data_dir("runtime", "include/microbuild")


def board_defs_dir() -> Path:
    """The built-in board definitions (``board_defs/*.yaml``)."""
    return _data_dir("board_defs", "*.yaml")


def project_templates_dir() -> Path:
    """The templates of generated projects (``project_templates/<format>/``)."""
    return _data_dir("project_templates", "make")
