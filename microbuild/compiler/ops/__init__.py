"""One module per operator; importing this package registers every lowering in REGISTRY.

Modules are discovered rather than listed so that adding an operator is adding a file.

Where op helpers live: a lowering several operators share, which registers nothing itself, is a
module here (``base``, ``unary``, ``broadcast_binary``, ``q4_activation``, ``conv_params``, and
``float_math``'s ``FloatOnlyLowering``). Arithmetic and checks that the compiler's passes and the
float32 glue use as well stay one level up in ``microbuild/compiler/``: ``quant.py`` and
``fixedpoint.py`` (TFLM's integer arithmetic), ``spatial.py`` (windows, filters, C structs; also
read by row_stream, overlap and the graph passes), ``elementwise.py`` (operand checks and
broadcasting; also read by ``f32/``), ``int32_arith.py`` and ``f32/``.
"""

import importlib
import pkgutil

from microbuild.compiler.ops.base import REGISTRY, OpLowering, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "OpLowering", "register"]
