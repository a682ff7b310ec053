#!/usr/bin/env python3
"""lockstep against PyTorch and ONNX Runtime on the same VITS decoder side, on one machine.

Builds tools/torch/vits_reference.py's model at a chosen size (default: the VITS paper's
decoder: 192 channels, HiFi-GAN from 512 channels with upsample rates 8,8,2,2), exports it with
PyTorch's TorchScript exporter (the ONNX lockstep is given, symbolic T), and times, per run from
host inputs to host outputs:
  torch-cuda-fp32   eager PyTorch on the GPU, TF32 off (float32 as written)
  torch-cuda-tf32   eager PyTorch with its default cuDNN setting (TF32 convolutions)
  ort-cpu           ONNX Runtime's CPU provider on the exported file, all cores
  lockstep-<target> `lockstep bench` on the exported file
Accuracy of each against PyTorch float64 (rel L2 of `audio` and `z`) is printed beside it.
Usage: compare.py --lockstep BIN [--T 256] [--runs 20] [--targets cuda,cpu] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import vits_reference as vr  # noqa: E402

VITS_DECODER = dict(channels=192, hidden=192, dilation_rate=1, wn_layers=4, n_flows=4,
                    rb_kernels=[3, 7, 11], rb_dilations=[[1, 3, 5]] * 3,
                    up_rates=[8, 8, 2, 2], up_kernels=[16, 16, 4, 4], up_initial=512)


def rel_l2(a, r):
    a = np.asarray(a, np.float64)
    r = np.asarray(r, np.float64)
    return float(np.linalg.norm(a - r) / np.linalg.norm(r))


def stats(ms):
    ms = sorted(ms)
    return {"min_ms": ms[0], "median_ms": float(np.median(ms)), "max_ms": ms[-1]}


def time_torch(model, z_p, y_mask, runs, warmup, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    m = model.float().cuda().eval()
    ms = []
    with torch.no_grad():
        for k in range(warmup + runs):
            t = time.perf_counter()
            z, audio = m(torch.from_numpy(z_p).cuda(), torch.from_numpy(y_mask).cuda())
            out = (z.cpu().numpy(), audio.cpu().numpy())  # .cpu() waits for the device
            if k >= warmup:
                ms.append((time.perf_counter() - t) * 1e3)
    return out, stats(ms)


def time_ort(path, z_p, y_mask, runs, warmup):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = os.cpu_count()
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {"z_p": z_p, "y_mask": y_mask}
    ms = []
    for k in range(warmup + runs):
        t = time.perf_counter()
        out = s.run(["z", "audio"], feed)
        if k >= warmup:
            ms.append((time.perf_counter() - t) * 1e3)
    return (out[0], out[1]), stats(ms), ort.__version__


def time_lockstep(binary, path, inputs, target, runs, warmup, out_dir):
    js = os.path.join(out_dir, f"bench_{target}.json")
    outs = os.path.join(out_dir, f"run_{target}")
    cmd = [binary, "bench", path, "--target", target, "--runs", str(runs), "--warmup", str(warmup),
           "--per-kernel", "--top", "10", "--json", js] + [f"--input={k}={v}" for k, v in inputs.items()]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout, r.stderr[-2000:], sep="", flush=True)
    if r.returncode != 0:
        return None, None
    run = subprocess.run([binary, "run", path, "--target", target, "--out", outs] +
                         [f"--input={k}={v}" for k, v in inputs.items()], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr[-2000:])
        return None, None
    res = json.load(open(js))
    z = np.load(os.path.join(outs, "z.npy"))
    audio = np.load(os.path.join(outs, "audio.npy"))
    return (z, audio), res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--T", type=int, default=256)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--targets", default="cuda,cpu")
    ap.add_argument("--up-initial", type=int, default=512)
    ap.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cfg = dict(VITS_DECODER, up_initial=a.up_initial)
    torch.manual_seed(0)
    model = vr.VitsDecoderSide(cfg)
    vr.init_weights(model, 0)
    model.eval()
    rng = np.random.default_rng(7)
    z_p = (0.667 * rng.standard_normal((1, cfg["channels"], a.T))).astype(np.float32)
    y_mask = np.ones((1, 1, a.T), np.float32)
    path = os.path.join(a.out, "vits_decoder.onnx")
    vr.export_torchscript(model, (torch.from_numpy(z_p), torch.from_numpy(y_mask)), path)
    inputs = {"z_p": os.path.join(a.out, "z_p.npy"), "y_mask": os.path.join(a.out, "y_mask.npy")}
    np.save(inputs["z_p"], z_p)
    np.save(inputs["y_mask"], y_mask)
    with torch.no_grad():  # float64 on the CPU, from a copy: `model` stays float32
        ref = [t.numpy() for t in _clone(model, cfg).double()(torch.from_numpy(z_p).double(),
                                                              torch.from_numpy(y_mask).double())]
    rows = []

    def add(name, out, st, note=""):
        rows.append({"name": name, **st, "rel_l2_audio": rel_l2(out[1], ref[1]), "rel_l2_z": rel_l2(out[0], ref[0]),
                     "note": note})

    for tf32 in (False, True):
        out, st = time_torch(_clone(model, cfg), z_p, y_mask, a.runs, a.warmup, tf32)
        add("torch-cuda-" + ("tf32" if tf32 else "fp32"), out, st, f"torch {torch.__version__}, eager")
    out, st, ver = time_ort(path, z_p, y_mask, max(3, a.runs // 4), 1)
    add("ort-cpu", out, st, f"onnxruntime {ver}, {os.cpu_count()} threads")
    for target in a.targets.split(","):
        out, res = time_lockstep(a.lockstep, path, inputs, target, a.runs, a.warmup, a.out)
        if out is None:
            rows.append({"name": "lockstep-" + target, "note": "failed (see above)"})
            continue
        add("lockstep-" + target, out, {k: res[k] for k in ("min_ms", "median_ms", "max_ms")},
            f"compile {res['compile_ms'] / 1e3:.1f} s, bit-identical runs: {res['bit_identical']}")
    json.dump({"config": cfg, "T": a.T, "rows": rows}, open(os.path.join(a.out, "compare.json"), "w"), indent=2)
    print(f"\n== VITS decoder side (channels {cfg['channels']}, HiFi-GAN from {cfg['up_initial']}), T={a.T} "
          f"frames -> {a.T * int(np.prod(cfg['up_rates']))} samples; per run, host to host")
    print(f"{'engine':<18} {'median ms':>10} {'min ms':>9} {'rel L2 audio':>13} {'rel L2 z':>10}  note")
    for r in rows:
        if "median_ms" not in r:
            print(f"{r['name']:<18} {'-':>10} {'-':>9} {'-':>13} {'-':>10}  {r['note']}")
            continue
        print(f"{r['name']:<18} {r['median_ms']:>10.3f} {r['min_ms']:>9.3f} {r['rel_l2_audio']:>13.2e} "
              f"{r['rel_l2_z']:>10.2e}  {r['note']}")


def _clone(model, cfg):
    m = vr.VitsDecoderSide(cfg)
    m.load_state_dict(model.state_dict())
    return m


if __name__ == "__main__":
    main()
