"""Which operators TensorFlow Lite Micro has a kernel for, so a refusal can say whether the
model would run in TFLM at all (then microbuild is what is missing) or not (then the model
needs changing for any microcontroller runtime).

The builtin list is the set of builtin operators TFLM's all-ops resolver registers (read from the
``tflite-micro`` 0.dev wheel's registrations; ``tests/compiler/test_op_table.py`` checks it against
the installed wheel when there is one). Float-only kernels are included: TFLM "has" them, even
though an int8 model cannot use them.
"""

from __future__ import annotations

TFLM_BUILTIN_OPS = frozenset({
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D",
    "BATCH_MATMUL", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST",
    "CEIL", "CONCATENATION", "CONV_2D", "COS", "CUMSUM", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
    "DEQUANTIZE", "DIV", "DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP",
    "EXPAND_DIMS", "FILL", "FLOOR", "FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER",
    "GATHER_ND", "GREATER", "GREATER_EQUAL", "HARD_SWISH", "IF", "L2_NORMALIZATION", "L2_POOL_2D",
    "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG", "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR",
    "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM", "MIRROR_PAD", "MUL",
    "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE", "READ_VARIABLE",
    "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2", "SHAPE", "SIN",
    "SLICE", "SOFTMAX", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT",
    "SQUARE", "SQUARED_DIFFERENCE", "SQUEEZE", "STRIDED_SLICE", "SUB", "SUM", "SVDF", "TANH",
    "TRANSPOSE", "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK", "VAR_HANDLE",
    "WHILE", "ZEROS_LIKE",
})

# Custom operators (by custom code) TFLM ships kernels for.
TFLM_CUSTOM_OPS = frozenset({
    "TFLite_Detection_PostProcess", "ETHOSU",
    "SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalIrfft", "SignalEnergy",
    "SignalFilterBank", "SignalFilterBankSquareRoot", "SignalFilterBankSpectralSubtraction",
    "SignalFilterBankLog", "SignalPCAN", "SignalFramer", "SignalOverlapAdd", "SignalDelay",
    "SignalStacker",
})
