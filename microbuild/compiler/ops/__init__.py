"""One module per operator; importing this package registers every lowering in REGISTRY.

Modules are discovered rather than listed so that adding an operator is adding a file.
"""

import importlib
import pkgutil

from microbuild.compiler.ops.base import REGISTRY, OpLowering, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "OpLowering", "register"]
