#!/usr/bin/env python3
"""lockstep against PyTorch and ONNX Runtime on the vision models and the transformer encoder.

Each model of tools/torch/export_vision.py (ResNet-18, MobileNetV3-Large, EfficientNet-B0, a
4-layer transformer encoder; random weights, seed 0) is exported with the TorchScript exporter
and timed per run from host input to host output:
  torch-cuda-fp32   eager PyTorch on the GPU, TF32 off (float32 as written)
  torch-cuda-tf32   eager PyTorch with its default cuDNN setting (TF32 convolutions)
  ort-cpu-<n>       ONNX Runtime's CPU provider, n threads (0: all cores)
  lockstep-<target> `lockstep bench` (cpu at each thread count)
with each output's rel L2 against PyTorch float64 on the CPU beside it.
Usage: vision_compare.py --lockstep BIN [--models a,b] [--targets cuda,opencl,cpu]
                         [--cpu-threads 0,2] [--runs 20] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import export_vision as ev  # noqa: E402
from compare import rel_l2, timed  # noqa: E402  (the VITS comparison's, this folder's)


def time_torch(model, x, runs, warmup, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    m = model.float().cuda().eval()
    with torch.no_grad():
        out, st = timed(lambda: m(torch.from_numpy(x).cuda()).cpu().numpy(), runs, warmup)
    return out, st["median_ms"]


def time_ort(path, x, runs, warmup, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads or os.cpu_count()
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    out, st = timed(lambda: s.run(["y"], {"x": x})[0], runs, warmup)
    return out, st["median_ms"]


def time_lockstep(binary, path, x_npy, target, runs, out_dir, threads=None):
    tag = target + ("" if threads is None else f"_t{threads}")
    js, outs = os.path.join(out_dir, f"bench_{tag}.json"), os.path.join(out_dir, f"run_{tag}")
    extra = [] if threads is None else ["--threads", str(threads)]
    r = subprocess.run([binary, "bench", path, "--target", target, "--runs", str(runs), "--per-kernel",
                        "--top", "8", "--json", js, f"--input=x={x_npy}"] + extra, capture_output=True, text=True)
    print(r.stdout, r.stderr[-2000:], sep="", flush=True)
    if r.returncode != 0:
        return None, None
    r = subprocess.run([binary, "run", path, "--target", target, "--out", outs, f"--input=x={x_npy}"] + extra,
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        return None, None
    median = json.load(open(js))["median_ms"]
    return np.load(os.path.join(outs, "y.npy")), median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--models", default=",".join(ev.available()))
    ap.add_argument("--targets", default="cuda,opencl,cpu")
    ap.add_argument("--cpu-threads", default="0,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", default="/tmp/vision_compare")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    threads = [int(t) for t in args.cpu_threads.split(",")]
    rows = []
    for name in args.models.split(","):
        model, x = ev.build(name)
        path = os.path.join(args.out, name + ".onnx")
        ev.export(model, x, path)
        xn = x.numpy()
        x_npy = os.path.join(args.out, name + "_x.npy")
        np.save(x_npy, xn)
        with torch.no_grad():
            want = model.double()(x.double()).numpy()
        model.float()
        runs = {}
        if torch.cuda.is_available():
            for tf32 in (False, True):
                out, ms = time_torch(model, xn, args.runs, args.warmup, tf32)
                runs["torch-cuda-" + ("tf32" if tf32 else "fp32")] = (ms, rel_l2(out, want))
        for t in threads:
            try:
                out, ms = time_ort(path, xn, args.runs, args.warmup, t)
                runs[f"ort-cpu-{t}"] = (ms, rel_l2(out, want))
            except ImportError:
                print("no onnxruntime here: ONNX Runtime not timed")
        for target in args.targets.split(","):
            for t in threads if target == "cpu" else [None]:
                out, ms = time_lockstep(args.lockstep, path, x_npy, target, args.runs, args.out, t)
                tag = "lockstep-" + target + ("" if t is None else f"-{t}")
                runs[tag] = (ms, rel_l2(out, want)) if out is not None else (float("nan"), float("nan"))
        rows.append((name, runs))
        json.dump({n: r for n, r in rows}, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    print(f"\n{'model':20} {'runner':18} {'median ms':>10} {'rel L2 vs f64':>14}")
    for name, runs in rows:
        for runner, (ms, err) in runs.items():
            print(f"{name:20} {runner:18} {ms:10.3f} {err:14.2e}")


if __name__ == "__main__":
    main()
