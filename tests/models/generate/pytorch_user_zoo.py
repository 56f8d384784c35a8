"""PyTorch models exported the way PyTorch users export them for microcontrollers: a trained
``torch.nn.Module`` through litert-torch, left in float32, and PT2E-quantized to int8 (as
``pytorch_models.py`` does). Written to ``tests/models/users/``; compared with TFLM by
``tests/compiler/test_user_models.py``.

Run from the repository root with a Python that has torch and litert-torch (neither is a
dependency of microbuild):

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 litert-torch
    /tmp/torchenv/bin/python tests/models/generate/pytorch_user_zoo.py

- ``torch_attention_float`` / ``_int8``: a one-head self-attention block on 8 tokens of 16
  features (Linear q/k/v, ``q @ k.T`` scaled, softmax, ``@ v``: litert-torch makes one product a
  FULLY_CONNECTED whose weights are computed at run time, the other a BATCH_MATMUL), LayerNorm, an
  MLP with the sigmoid form of GELU (``nn.GELU`` exports as GELU, which TFLM has no kernel for),
  mean over the tokens, a Linear classifier.
- ``torch_cnn_float``: Conv2d-BatchNorm-ReLU, a depthwise conv with Hardswish, adaptive average
  pooling (mean) and a Linear head on NCHW 3x16x16 frames.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from common import op_names, save  # noqa: E402
from pytorch_models import _torch, _train  # noqa: E402


def _save(name: str, data: bytes) -> None:
    if len(data) > 100_000:
        raise SystemExit(f"{name}: {len(data)} bytes, over the 100 KB a test model may take")
    print(f"{name}: {' '.join(op_names(data))}")
    save(f"users/{name}.tflite", data)


def _export_float(model, sample, name: str) -> None:
    import litert_torch

    path = f"/tmp/mb-{name}.tflite"
    litert_torch.convert(model.eval(), (sample,)).export(path)
    with open(path, "rb") as f:
        _save(name, f.read())


def _export_int8(model, sample, calibration, name: str) -> None:
    torch = _torch()
    import litert_torch
    from litert_torch.quantize import pt2e_quantizer
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e import quantize_pt2e

    exported = torch.export.export(model.eval(), (sample,)).module()
    quantizer = pt2e_quantizer.PT2EQuantizer().set_global(
        pt2e_quantizer.get_symmetric_quantization_config(is_per_channel=True))
    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    quantized = quantize_pt2e.convert_pt2e(prepared, fold_quantize=False)
    path = f"/tmp/mb-{name}.tflite"
    litert_torch.convert(quantized, (sample,),
                         quant_config=QuantConfig(pt2e_quantizer=quantizer)).export(path)
    with open(path, "rb") as f:
        _save(name, f.read())


def attention() -> None:
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(2600)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16)
            self.norm1, self.norm2 = nn.LayerNorm(16), nn.LayerNorm(16)
            self.up, self.down = nn.Linear(16, 32), nn.Linear(32, 16)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            h = self.norm1(x)
            scores = self.q(h) @ self.k(h).transpose(-1, -2) * 0.25
            x = x + torch.softmax(scores, dim=-1) @ self.v(h)
            h = self.up(self.norm2(x))
            x = x + self.down(h * torch.sigmoid(1.702 * h))  # "quick GELU"
            return self.head(x.mean(dim=1))

    generator = torch.Generator().manual_seed(2601)
    centers = torch.randn(3, 16, generator=generator)

    def batch():
        y = torch.randint(0, 3, (32,), generator=generator)
        x = torch.randn(32, 8, 16, generator=generator) * 0.5 + centers[y][:, None, :]
        return x, y

    model = Block()
    _train(model, batch, 200, 2602)
    sample = batch()[0][:1]
    _export_float(model, sample, "torch_attention_float")
    _export_int8(model, sample, [batch()[0][i:i + 1] for i in range(32)], "torch_attention_int8")


def cnn() -> None:
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(2610)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Hardswish(),
        nn.Conv2d(8, 16, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(16, 4))
    generator = torch.Generator().manual_seed(2611)

    def batch():
        x = torch.rand(32, 3, 16, 16, generator=generator) * 0.5
        y = torch.randint(0, 4, (32,), generator=generator)
        for i, label in enumerate(y.tolist()):
            r, c = divmod(label, 2)
            x[i, :, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8] += 0.5
        return x, y

    _train(model, batch, 200, 2612)
    _export_float(model, batch()[0][:1], "torch_cnn_float")


if __name__ == "__main__":
    _torch()
    wanted = set(sys.argv[1:])
    for make in (attention, cnn):
        if not wanted or make.__name__ in wanted:
            make()
