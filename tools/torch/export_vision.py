#!/usr/bin/env python3
"""Exports the vision and transformer models of the op-coverage issue for parity and bench runs.

torchvision's ResNet-18, MobileNetV3-Large and EfficientNet-B0 (random weights, seed 0,
eval mode, input [1, 3, 224, 224]) and a transformer encoder (nn.TransformerEncoder, 4 layers,
d_model 256, 4 heads, feed-forward 1024, GELU, batch_first, input [1, 128, 256]), each exported
with PyTorch's TorchScript exporter at opset 17. The files are large (ResNet-18 is 45 MB), so
they are made where they are used, not committed.

Without torchvision (PyTorch alone) ResNet-18 is built from its definition here, layer for
layer torchvision's, and the other two CNNs are left out.
Usage: export_vision.py OUT_DIR [--models resnet18,mobilenet_v3_large,efficientnet_b0,encoder]
"""
import argparse
import os

import torch

try:
    import torchvision
except ImportError:  # the GPU machine may have PyTorch alone: ResNet-18 is written out below
    torchvision = None


def encoder():
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu",
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    # The layers start as copies of one; distinct weights keep the exporter from sharing them.
    for name, p in model.named_parameters():
        with torch.no_grad():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.normal_(1.0, 0.1)
            else:
                p.normal_(0.0, 0.02)
    return model, (1, 128, 256)


class BasicBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


def resnet18_plain():
    """torchvision's ResNet-18 (the same layers and initialisation), for a machine without it."""
    nn = torch.nn
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000))
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    return model


def resnet18():
    return torchvision.models.resnet18() if torchvision else resnet18_plain()


MODELS = {
    "resnet18": lambda: (resnet18(), (1, 3, 224, 224)),
    "mobilenet_v3_large": lambda: (torchvision.models.mobilenet_v3_large(), (1, 3, 224, 224)),
    "efficientnet_b0": lambda: (torchvision.models.efficientnet_b0(), (1, 3, 224, 224)),
    "encoder": encoder,
}


def available():
    return [n for n in MODELS if torchvision or n in ("resnet18", "encoder")]


def build(name):
    """The model in eval mode (weights from seed 0) and an input of its shape (seed 1)."""
    torch.manual_seed(0)
    model, shape = MODELS[name]()
    model.eval()
    torch.manual_seed(1)
    return model, torch.randn(*shape)


def export(model, x, path):
    # Newer PyTorch defaults to the dynamo exporter; the TorchScript one is what users ran.
    extra = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    # With gradients on, eval-mode attention keeps off its fused kernel, which does not export.
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"], output_names=["y"],
                      **extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", default=",".join(available()))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        model, x = build(name)
        path = os.path.join(args.out, name + ".onnx")
        export(model, x, path)
        print(name, path, os.path.getsize(path))


if __name__ == "__main__":
    main()
