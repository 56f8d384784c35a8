"""Project formats: one module each (platformio, zephyr, scons, make), discovered rather than
listed, each defining a ProjectFormat subclass that registers itself (base.py)."""

import importlib
import pkgutil

from microbuild.project.formats.base import FORMATS, ProjectFormat, format_names

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["FORMATS", "ProjectFormat", "format_names"]
