"""IR -> memory plan -> C sources of one model.

``compile_model`` is the entry point; ``microbuild.compiler.ops`` holds one lowering per operator.
"""

from microbuild.compiler.codegen import CompiledModel, TensorSpec, compile_model, lowered_graph

__all__ = ["CompiledModel", "TensorSpec", "compile_model", "lowered_graph"]
