"""Model blobs: a compiled model as data (docs/model-blob.md).

The table executor's firmware links a fixed *kernel set* (kernel_set.py) and runs whatever model
blob it is given; ``pack`` (pack.py) turns a compiled model into such a blob for one kernel set,
and ``format`` writes, reads and checks the byte layout the C runner (runtime/table/) reads.
"""

from microbuild.blob.format import (
    Blob, BlobArg, BlobOp, ParamBlock, check_blob, read_blob, write_blob)
from microbuild.blob.kernel_set import KernelSet
from microbuild.blob.pack import pack_model

__all__ = ["Blob", "BlobArg", "BlobOp", "KernelSet", "ParamBlock", "check_blob", "pack_model",
           "read_blob", "write_blob"]
