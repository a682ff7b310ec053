#!/usr/bin/env python3
"""A small, faithful VITS decoder side (flow in reverse + HiFi-GAN generator) in PyTorch.

Exports it to ONNX with both PyTorch exporters, runs PyTorch in float64 and ONNX Runtime in
float32 on the same float32 inputs, and writes everything lockstep's tests compare against:
  vits_small_ts.onnx      TorchScript exporter (dynamo=False), opset 17, symbolic T
  vits_small_dynamo.onnx  torch.export-based exporter (dynamo=True), weights embedded
  arrays.tar              <set>_z_p.npy, <set>_y_mask.npy (float32 inputs),
                          <set>_torch_f64_{z,audio}.npy, <set>_ort_{ts,dynamo}_{z,audio}.npy
  summary.txt / summary.json
Runs where torch, onnx, onnxscript and onnxruntime are installed (the GPU machine).
"""
import argparse
import collections
import io
import json
import math
import os
import platform
import sys
import tarfile
import traceback

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# The ONNX LeakyRelu `alpha` attribute is a float32; using the float32 values here makes the
# float64 PyTorch run compute exactly what the exported graph says.
LRELU_SLOPE = float(np.float32(0.1))
FINAL_LRELU_SLOPE = float(np.float32(0.01))  # F.leaky_relu's default slope, as VITS uses it


def get_padding(kernel_size, dilation=1):
    return int((kernel_size * dilation - dilation) / 2)


class WN(nn.Module):
    """VITS WaveNet stack (modules.WN) with weight norm removed and no speaker input."""

    def __init__(self, hidden, kernel_size, dilation_rate, n_layers):
        super().__init__()
        self.hidden = hidden
        self.n_layers = n_layers
        self.in_layers = nn.ModuleList()
        self.res_skip_layers = nn.ModuleList()
        for i in range(n_layers):
            dilation = dilation_rate ** i
            padding = int((kernel_size * dilation - dilation) / 2)
            self.in_layers.append(nn.Conv1d(hidden, 2 * hidden, kernel_size,
                                            dilation=dilation, padding=padding))
            res_skip = 2 * hidden if i < n_layers - 1 else hidden
            self.res_skip_layers.append(nn.Conv1d(hidden, res_skip, 1))

    def forward(self, x, x_mask):
        output = None
        h = self.hidden
        for i in range(self.n_layers):
            x_in = self.in_layers[i](x)
            acts = torch.tanh(x_in[:, :h]) * torch.sigmoid(x_in[:, h:])
            res_skip = self.res_skip_layers[i](acts)
            if i < self.n_layers - 1:
                x = (x + res_skip[:, :h]) * x_mask
                skip = res_skip[:, h:]
            else:
                skip = res_skip
            output = skip if output is None else output + skip
        return output * x_mask


class ResidualCouplingLayer(nn.Module):
    """modules.ResidualCouplingLayer with mean_only=True (logs == 0, so exp(-logs) == 1)."""

    def __init__(self, channels, hidden, kernel_size, dilation_rate, n_layers):
        super().__init__()
        self.half = channels // 2
        self.pre = nn.Conv1d(self.half, hidden, 1)
        self.enc = WN(hidden, kernel_size, dilation_rate, n_layers)
        self.post = nn.Conv1d(hidden, self.half, 1)

    def reverse(self, x, x_mask):
        x0, x1 = torch.split(x, [self.half, self.half], 1)
        h = self.pre(x0) * x_mask
        h = self.enc(h, x_mask)
        m = self.post(h) * x_mask
        x1 = (x1 - m) * x_mask
        return torch.cat([x0, x1], 1)


class ResidualCouplingBlock(nn.Module):
    """models.ResidualCouplingBlock: [coupling, flip] * n_flows, run backwards at inference."""

    def __init__(self, channels, hidden, kernel_size, dilation_rate, n_layers, n_flows):
        super().__init__()
        self.flows = nn.ModuleList()
        for _ in range(n_flows):
            self.flows.append(ResidualCouplingLayer(channels, hidden, kernel_size,
                                                    dilation_rate, n_layers))
            self.flows.append(nn.Identity())  # stands for modules.Flip (no parameters)

    def reverse(self, x, x_mask):
        for flow in reversed(self.flows):
            if isinstance(flow, nn.Identity):
                x = torch.flip(x, [1])
            else:
                x = flow.reverse(x, x_mask)
        return x


class ResBlock1(nn.Module):
    """modules.ResBlock1 without weight norm."""

    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.convs1 = nn.ModuleList([
            nn.Conv1d(channels, channels, kernel_size, 1, dilation=d,
                      padding=get_padding(kernel_size, d)) for d in dilation])
        self.convs2 = nn.ModuleList([
            nn.Conv1d(channels, channels, kernel_size, 1, dilation=1,
                      padding=get_padding(kernel_size, 1)) for _ in dilation])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = F.leaky_relu(x, LRELU_SLOPE)
            xt = c1(xt)
            xt = F.leaky_relu(xt, LRELU_SLOPE)
            xt = c2(xt)
            x = xt + x
        return x


class Generator(nn.Module):
    """models.Generator (HiFi-GAN) with resblock '1' and no speaker input."""

    def __init__(self, initial_channel, rb_kernels, rb_dilations, up_rates, up_initial, up_kernels):
        super().__init__()
        self.num_kernels = len(rb_kernels)
        self.num_upsamples = len(up_rates)
        self.conv_pre = nn.Conv1d(initial_channel, up_initial, 7, 1, padding=3)
        self.ups = nn.ModuleList()
        for i, (u, k) in enumerate(zip(up_rates, up_kernels)):
            self.ups.append(nn.ConvTranspose1d(up_initial // (2 ** i), up_initial // (2 ** (i + 1)),
                                               k, u, padding=(k - u) // 2))
        self.resblocks = nn.ModuleList()
        for i in range(len(self.ups)):
            ch = up_initial // (2 ** (i + 1))
            for k, d in zip(rb_kernels, rb_dilations):
                self.resblocks.append(ResBlock1(ch, k, d))
        self.conv_post = nn.Conv1d(ch, 1, 7, 1, padding=3, bias=False)

    def forward(self, x):
        x = self.conv_pre(x)
        for i in range(self.num_upsamples):
            x = F.leaky_relu(x, LRELU_SLOPE)
            x = self.ups[i](x)
            xs = None
            for j in range(self.num_kernels):
                r = self.resblocks[i * self.num_kernels + j](x)
                xs = r if xs is None else xs + r
            x = xs / self.num_kernels
        x = F.leaky_relu(x, FINAL_LRELU_SLOPE)
        x = self.conv_post(x)
        return torch.tanh(x)


class VitsDecoderSide(nn.Module):
    """SynthesizerTrn.infer after the prior: z = flow^-1(z_p); audio = dec(z * mask) * mask_up."""

    def __init__(self, cfg):
        super().__init__()
        self.hop = math.prod(cfg["up_rates"])
        self.flow = ResidualCouplingBlock(cfg["channels"], cfg["hidden"], 5, cfg["dilation_rate"],
                                          cfg["wn_layers"], cfg["n_flows"])
        self.dec = Generator(cfg["channels"], cfg["rb_kernels"], cfg["rb_dilations"],
                             cfg["up_rates"], cfg["up_initial"], cfg["up_kernels"])

    def forward(self, z_p, y_mask):
        z = self.flow.reverse(z_p, y_mask)
        audio = self.dec(z * y_mask)
        mask_up = torch.repeat_interleave(y_mask, self.hop, dim=2)
        return z, audio * mask_up


CONFIG = dict(channels=16, hidden=16, dilation_rate=1, wn_layers=4, n_flows=4,
              rb_kernels=[3, 7, 11], rb_dilations=[[1, 3, 5]] * 3,
              up_rates=[4, 4], up_kernels=[8, 8], up_initial=16)


def init_weights(model, seed):
    """Flow: i.i.d. N(0, 0.1) (as the issue's graph); dec: N(0, 1/fan_in) keeps signals O(1)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.flow.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
        for m in model.dec.modules():
            if isinstance(m, nn.ConvTranspose1d):
                fan_in = m.in_channels * m.kernel_size[0] / m.stride[0]
            elif isinstance(m, nn.Conv1d):
                fan_in = m.in_channels * m.kernel_size[0]
            else:
                continue
            m.weight.copy_(torch.randn(m.weight.shape, generator=gen) / math.sqrt(fan_in))
            if m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.05)


def make_inputs(channels):
    """Two float32 input sets: the seed's sine at T=64, and noise with half the mask off at T=37."""
    c = np.arange(channels)[:, None]
    t = np.arange(64)[None, :]
    sine = (0.5 * np.sin(2 * np.pi * (3 * c + t) / 128))[None].astype(np.float32)
    rng = np.random.default_rng(1234)
    noise = (0.667 * rng.standard_normal((1, channels, 37))).astype(np.float32)
    half = np.zeros((1, 1, 37), np.float32)
    half[..., :19] = 1
    return {
        "sine64": (sine, np.ones((1, 1, 64), np.float32)),
        "halfmask37": (noise, half),
    }


def rel_l2(a, r):
    a = np.asarray(a, np.float64)
    r = np.asarray(r, np.float64)
    return float(np.linalg.norm(a - r) / np.linalg.norm(r))


def export_torchscript(model, example, path):
    # torch < 2.5 has only this exporter and no `dynamo` argument (used for local checks)
    legacy = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
    torch.onnx.export(model, example, path, opset_version=17, **legacy,
                      input_names=["z_p", "y_mask"], output_names=["z", "audio"],
                      dynamic_axes={"z_p": {2: "T"}, "y_mask": {2: "T"},
                                    "z": {2: "T"}, "audio": {2: "T_audio"}})


def export_dynamo(model, example, path, notes):
    """Named shared dim first; Dim.AUTO if torch.export rejects it (the reason is recorded)."""
    Dim = torch.export.Dim
    program = None
    for label, T in (("Dim('T')", Dim("T", min=2, max=1 << 16)), ("Dim.AUTO", Dim.AUTO)):
        try:
            program = torch.onnx.export(model, example, dynamo=True,
                                        input_names=["z_p", "y_mask"], output_names=["z", "audio"],
                                        dynamic_shapes={"z_p": {2: T}, "y_mask": {2: T}})
            notes["dynamo_dynamic_shapes"] = label
            break
        except Exception as e:
            notes[f"dynamo_error_{label}"] = traceback.format_exc()[-3000:]
            print(f"dynamo export with {label} failed: {type(e).__name__}: {e}"[:2000], file=sys.stderr)
    if program is None:
        raise RuntimeError("dynamo export failed with every dynamic-shape spec")
    try:
        program.save(path, external_data=False)
    except TypeError:
        program.save(path)
    embed_external_data(path)


def embed_external_data(path):
    """Rewrites the file with every initializer inline if the exporter split any out."""
    import onnx
    from onnx import external_data_helper
    model = onnx.load(path, load_external_data=False)
    if not any(external_data_helper.uses_external_data(t) for t in model.graph.initializer):
        return
    model = onnx.load(path)
    onnx.save_model(model, path, save_as_external_data=False)


def describe_onnx(path):
    import onnx
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model)
        checker = "ok"
    except Exception as e:  # recorded, not fatal: the test decides what lockstep accepts
        checker = f"{type(e).__name__}: {e}"[:300]

    def dims(v):
        return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]

    ops = collections.Counter(n.op_type for n in model.graph.node)
    return {
        "bytes": os.path.getsize(path),
        "ir_version": model.ir_version,
        "opsets": {o.domain or "ai.onnx": o.version for o in model.opset_import},
        "producer": f"{model.producer_name} {model.producer_version}",
        "nodes": len(model.graph.node),
        "initializers": len(model.graph.initializer),
        "functions": len(model.functions),
        "ops": dict(sorted(ops.items())),
        "inputs": {i.name: dims(i) for i in model.graph.input},
        "outputs": {o.name: dims(o) for o in model.graph.output},
        "checker": checker,
    }


def run_ort(path, z_p, y_mask):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    outs = sess.run(None, dict(zip(names, [z_p, y_mask])))
    return dict(zip([o.name for o in sess.get_outputs()], outs))


def versions():
    v = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__}
    for name in ("onnx", "onnxruntime", "onnxscript"):
        try:
            v[name] = __import__(name).__version__
        except Exception as e:
            v[name] = f"unavailable ({type(e).__name__})"
    return v


def cuda_cross_check(m64, z_p, y_mask, ref):
    """The same float64 model on the GPU: a second, independent float64 evaluation."""
    import copy
    try:
        mc = copy.deepcopy(m64).cuda()
        with torch.no_grad():
            z, a = mc(torch.from_numpy(z_p).double().cuda(), torch.from_numpy(y_mask).double().cuda())
        return {"z": rel_l2(z.cpu(), ref["z"]), "audio": rel_l2(a.cpu(), ref["audio"])}
    except Exception as e:
        return f"failed: {type(e).__name__}: {e}"[:300]


def print_summary(summary):
    print(f"parameters: {summary['parameters']}")
    for key, g in summary.get("graphs", {}).items():
        print(f"graph {key}: {g['bytes']} bytes, IR {g['ir_version']}, opsets {g['opsets']}, "
              f"{g['nodes']} nodes, {g['initializers']} initializers, {g['functions']} functions, "
              f"checker {g['checker']}")
        print(f"  inputs {g['inputs']} outputs {g['outputs']}")
        print(f"  ops {g['ops']}")
    for name, run in summary["runs"].items():
        print(f"run {name}: shapes {run['shapes']} rms {run['rms']}")
        for key, v in run["rel_l2"].items():
            print(f"  rel L2 vs torch f64, {key}: {v}")
    for key in ("ts_error", "dynamo_error"):
        if key in summary:
            print(f"{key}:\n{summary[key]}")
    if "dynamo_dynamic_shapes" in summary:
        print(f"dynamo dynamic_shapes: {summary['dynamo_dynamic_shapes']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-dynamo", action="store_true")
    ap.add_argument("--skip-ort", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    summary = {"versions": versions(), "config": CONFIG, "seed": args.seed}
    print(json.dumps(summary["versions"]))

    model = VitsDecoderSide(CONFIG).eval()
    init_weights(model, args.seed)
    summary["parameters"] = sum(p.numel() for p in model.parameters())
    inputs = make_inputs(CONFIG["channels"])
    example = tuple(torch.from_numpy(a) for a in inputs["sine64"])

    exported = {}
    ts_path = os.path.join(args.out, "vits_small_ts.onnx")
    try:
        export_torchscript(model, example, ts_path)
        exported["ts"] = ts_path
    except Exception as e:
        summary["ts_error"] = traceback.format_exc()[-3000:]
        print("torchscript export failed:", type(e).__name__, e, file=sys.stderr)
    if not args.skip_dynamo:
        dyn_path = os.path.join(args.out, "vits_small_dynamo.onnx")
        try:
            export_dynamo(model, example, dyn_path, summary)
            exported["dynamo"] = dyn_path
        except Exception as e:
            summary["dynamo_error"] = traceback.format_exc()[-3000:]
            print("dynamo export failed:", type(e).__name__, e, file=sys.stderr)
    summary["graphs"] = {k: describe_onnx(p) for k, p in exported.items()}

    arrays = {}
    m64 = VitsDecoderSide(CONFIG).eval()
    m64.load_state_dict(model.state_dict())
    m64 = m64.double()  # float32 weights upcast exactly
    runs = summary["runs"] = {}
    for name, (z_p, y_mask) in inputs.items():
        arrays[f"{name}_z_p"] = z_p
        arrays[f"{name}_y_mask"] = y_mask
        with torch.no_grad():
            z64, a64 = m64(torch.from_numpy(z_p).double(), torch.from_numpy(y_mask).double())
            z32, a32 = model(torch.from_numpy(z_p), torch.from_numpy(y_mask))
        ref = {"z": z64.numpy(), "audio": a64.numpy()}
        run = runs[name] = {"shapes": {k: list(v.shape) for k, v in ref.items()},
                            "rms": {k: float(np.sqrt(np.mean(v ** 2))) for k, v in ref.items()},
                            "rel_l2": {}}
        for k, v in ref.items():
            arrays[f"{name}_torch_f64_{k}"] = v
        run["rel_l2"]["torch_f32"] = {"z": rel_l2(z32, ref["z"]), "audio": rel_l2(a32, ref["audio"])}
        if torch.cuda.is_available():
            run["rel_l2"]["torch_cuda_f64"] = cuda_cross_check(m64, z_p, y_mask, ref)
        if args.skip_ort:
            continue
        for key, path in exported.items():
            try:
                outs = run_ort(path, z_p, y_mask)
            except Exception as e:
                run["rel_l2"][f"ort_{key}"] = f"failed: {type(e).__name__}: {e}"[:500]
                continue
            run["rel_l2"][f"ort_{key}"] = {k: rel_l2(outs[k], ref[k]) for k in ref}
            for k in ref:
                arrays[f"{name}_ort_{key}_{k}"] = outs[k].astype(np.float32)

    with tarfile.open(os.path.join(args.out, "arrays.tar"), "w") as tar:
        for name, arr in sorted(arrays.items()):
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(arr))
            info = tarfile.TarInfo(f"{name}.npy")
            info.size = buf.tell()
            buf.seek(0)
            tar.addfile(info, buf)
    summary["arrays"] = {k: f"{v.dtype} {list(v.shape)}" for k, v in sorted(arrays.items())}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print_summary(summary)


if __name__ == "__main__":
    main()
