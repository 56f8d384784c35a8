"""The model room: .tflite flatbuffer -> graph IR (``microbuild.model.ir``)."""
