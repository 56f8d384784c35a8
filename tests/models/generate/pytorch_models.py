"""Make int8 test models the way PyTorch users make them: a trained torch.nn.Module, PT2E
quantization (torchao's prepare_pt2e / convert_pt2e with litert-torch's quantizer, calibrated on
training data) and litert-torch's converter.

Run from the repository root with a Python that has torch and litert-torch (neither is a
dependency of microbuild):

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 litert-torch
    /tmp/torchenv/bin/python tests/models/generate/pytorch_models.py

What these exports carry that Keras models do not: NCHW inputs, so a TRANSPOSE to NHWC right
after the input, a TRANSPOSE back to NCHW before ``torch.flatten`` feeds a ``nn.Linear`` (the
converter's RESHAPE then reads the NCHW order), int8 requantizing QUANTIZE ops between layers,
PAD operators for convolution padding, symmetric per-channel weights. The models are trained for a
few hundred steps on seeded synthetic tasks, so weights and biases have trained magnitudes, not
initializer noise. Seeded: reruns give identical files on the same torch version.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from common import op_names, save  # noqa: E402


def _torch():
    try:
        import litert_torch  # noqa: F401
        import torch
    except ImportError:
        print("pytorch_models: skipped, this generator needs torch and litert-torch "
              "(see the docstring)", file=sys.stderr)
        sys.exit(0)
    return torch


def _train(model, make_batch, steps: int, seed: int) -> None:
    torch = _torch()
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        x, y = make_batch()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()


def _export(model, sample, calibration, name: str, expected_ops: set[str]) -> None:
    torch = _torch()
    import litert_torch
    from litert_torch.quantize import pt2e_quantizer
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e import quantize_pt2e

    exported = torch.export.export(model, (sample,)).module()
    quantizer = pt2e_quantizer.PT2EQuantizer().set_global(
        pt2e_quantizer.get_symmetric_quantization_config(is_per_channel=True))
    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    quantized = quantize_pt2e.convert_pt2e(prepared, fold_quantize=False)
    edge = litert_torch.convert(quantized, (sample,),
                                quant_config=QuantConfig(pt2e_quantizer=quantizer))
    path = f"/tmp/mb-{name}.tflite"
    edge.export(path)
    with open(path, "rb") as f:
        data = f.read()
    ops = set(op_names(data))
    if ops != expected_ops:
        raise SystemExit(f"{name}: expected operators {sorted(expected_ops)}, the converter "
                         f"emitted {sorted(ops)}")
    save(f"{name}.tflite", data)


def cnn_flatten() -> None:
    """Conv-BN-ReLU, depthwise + pointwise, average pooling, flatten, linear: 3x16x16 -> 4
    classes (which quadrant of the image is brightest)."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(1500)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.pw = nn.Conv2d(8, 16, 1)
            self.fc = nn.Linear(16 * 4 * 4, 4)

        def forward(self, x):
            x = torch.relu(self.bn(self.conv(x)))
            x = torch.relu(self.pw(torch.relu(self.dw(x))))
            x = nn.functional.avg_pool2d(x, 2)
            return self.fc(torch.flatten(x, 1))

    generator = torch.Generator().manual_seed(1501)

    def batch():
        x = torch.rand(32, 3, 16, 16, generator=generator) * 0.5
        y = torch.randint(0, 4, (32,), generator=generator)
        for i, label in enumerate(y.tolist()):
            r, c = divmod(label, 2)
            x[i, :, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8] += 0.5
        return x, y

    model = Net()
    _train(model, batch, 300, 1502)
    _export(model, batch()[0][:1], [batch()[0][i:i + 1] for i in range(32)], "torch_cnn_flatten",
            {"TRANSPOSE", "PAD", "CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "QUANTIZE",
             "RESHAPE", "FULLY_CONNECTED"})


def mlp() -> None:
    """Linear-ReLU-Linear-ReLU-Linear on 20 features -> 3 classes (no layout operators)."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(1510)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(),
                          nn.Linear(16, 3))
    generator = torch.Generator().manual_seed(1511)
    centers = torch.randn(3, 20, generator=generator) * 2

    def batch():
        y = torch.randint(0, 3, (64,), generator=generator)
        return centers[y] + torch.randn(64, 20, generator=generator), y

    _train(model, batch, 300, 1512)
    _export(model, batch()[0][:1], [batch()[0][i:i + 1] for i in range(64)], "torch_mlp",
            {"FULLY_CONNECTED"})


if __name__ == "__main__":
    cnn_flatten()
    mlp()
