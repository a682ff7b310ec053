#!/usr/bin/env python3
"""lockstep against PyTorch and ONNX Runtime on the same VITS decoder side, on one machine.

Builds tools/torch/vits_reference.py's model at a chosen size (default: the VITS paper's
decoder: 192 channels, HiFi-GAN from 512 channels with upsample rates 8,8,2,2), exports it with
PyTorch's TorchScript exporter (the ONNX lockstep is given, symbolic T), and times, per run from
host inputs to host outputs:
  torch-cuda-fp32   eager PyTorch on the GPU, TF32 off (float32 as written)
  torch-cuda-tf32   eager PyTorch with its default cuDNN setting (TF32 convolutions)
  ort-cpu           ONNX Runtime's CPU provider on the exported file, all cores
  lockstep-<target> `lockstep bench` on the exported file: the symbolic program (one compile
                    for every T) and, as lockstep-<target>-spec, the one compiled for this T
  torch-cuda-graph  the fp32 model captured once in a CUDA graph and replayed
  torch-compile     torch.compile(mode="max-autotune"), TF32 off (with --torch-compile: minutes)
ONNX Runtime and lockstep's cpu target run once per --cpu-threads count (0: all cores).
Accuracy of each against PyTorch float64 (rel L2 of `audio` and `z`) is printed beside it.
--config picks the model: `paper` (default, T=256) or `h128` (flow hidden 72, HiFi-GAN from 128
channels, T=1024: 41.6 GFLOP, the configuration lockstep's speed goals are stated for).
Usage: compare.py --lockstep BIN [--config paper|h128] [--T N] [--runs 20] [--targets cuda,cpu]
                  [--cpu-threads 0,2] [--torch-compile] [--out DIR]
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
# lockstep-vitsgen --part decoder --upsample-channels 128 (its defaults: z 128, hidden 72).
H128 = dict(VITS_DECODER, channels=128, hidden=72, up_initial=128)
CONFIGS = {"paper": (VITS_DECODER, 256), "h128": (H128, 1024)}


def rel_l2(a, r):
    a = np.asarray(a, np.float64)
    r = np.asarray(r, np.float64)
    return float(np.linalg.norm(a - r) / np.linalg.norm(r))


def stats(ms):
    ms = sorted(ms)
    return {"min_ms": ms[0], "median_ms": float(np.median(ms)), "max_ms": ms[-1]}


def timed(step, runs, warmup):
    """The last result of step() and the stats of the timed calls after `warmup` untimed ones."""
    ms = []
    for k in range(warmup + runs):
        t = time.perf_counter()
        out = step()
        if k >= warmup:
            ms.append((time.perf_counter() - t) * 1e3)
    return out, stats(ms)


def host_to_host(m, z_p, y_mask):
    z, audio = m(torch.from_numpy(z_p).cuda(), torch.from_numpy(y_mask).cuda())
    return z.cpu().numpy(), audio.cpu().numpy()  # .cpu() waits for the device


def time_torch(model, z_p, y_mask, runs, warmup, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    m = model.float().cuda().eval()
    with torch.no_grad():
        return timed(lambda: host_to_host(m, z_p, y_mask), runs, warmup)


def time_torch_graph(model, z_p, y_mask, runs, warmup):
    """fp32, captured once in a CUDA graph; each run copies the inputs in and the outputs out."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    m = model.float().cuda().eval()
    zi, mi = torch.from_numpy(z_p).cuda(), torch.from_numpy(y_mask).cuda()
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                m(zi, mi)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            zo, ao = m(zi, mi)

        def step():
            zi.copy_(torch.from_numpy(z_p))
            mi.copy_(torch.from_numpy(y_mask))
            g.replay()
            return zo.cpu().numpy(), ao.cpu().numpy()
        return timed(step, runs, warmup)


def time_torch_compile(model, z_p, y_mask, runs, warmup):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    m = torch.compile(model.float().cuda().eval(), mode="max-autotune")
    t0 = time.perf_counter()
    with torch.no_grad():
        host_to_host(m, z_p, y_mask)  # compiles
        compile_s = time.perf_counter() - t0
        out, st = timed(lambda: host_to_host(m, z_p, y_mask), runs, warmup)
    return out, st, compile_s


def time_ort(path, z_p, y_mask, runs, warmup, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads or os.cpu_count()
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {"z_p": z_p, "y_mask": y_mask}
    out, st = timed(lambda: s.run(["z", "audio"], feed), runs, warmup)
    return (out[0], out[1]), st, ort.__version__


def time_lockstep(binary, path, inputs, target, runs, warmup, out_dir, threads=None, mode="symbolic"):
    tag = target + ("" if threads is None else f"_t{threads}") + "_" + mode
    js = os.path.join(out_dir, f"bench_{tag}.json")
    outs = os.path.join(out_dir, f"run_{tag}")
    cmd = [binary, "bench", path, "--target", target, "--runs", str(runs), "--warmup", str(warmup),
           "--per-kernel", "--top", "10", "--json", js] + [f"--input={k}={v}" for k, v in inputs.items()]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    cmd += ["--" + mode]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout, r.stderr[-2000:], sep="", flush=True)
    if r.returncode != 0:
        return None, None
    run = subprocess.run([binary, "run", path, "--target", target, "--out", outs, "--" + mode] +
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
    ap.add_argument("--config", choices=sorted(CONFIGS), default="paper")
    ap.add_argument("--T", type=int, help="frames (default: the config's)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--targets", default="cuda,cpu")
    ap.add_argument("--cpu-threads", default="0", help="thread counts for ort-cpu and lockstep-cpu (0: all cores)")
    ap.add_argument("--torch-compile", action="store_true", help="also time torch.compile max-autotune (minutes)")
    ap.add_argument("--modes", default="symbolic,specialise",
                    help="lockstep's programs: one for every T (symbolic) and/or one for this T (specialise)")
    ap.add_argument("--up-initial", type=int, help="HiFi-GAN channels (default: the config's)")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cfg, frames = CONFIGS[a.config]
    cfg = dict(cfg, up_initial=a.up_initial or cfg["up_initial"])
    a.T = a.T or frames
    threads = [int(t) for t in a.cpu_threads.split(",")]
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
    out, st = time_torch_graph(_clone(model, cfg), z_p, y_mask, a.runs, a.warmup)
    add("torch-cuda-graph", out, st, "fp32, one CUDA graph replayed")
    if a.torch_compile:
        out, st, compile_s = time_torch_compile(_clone(model, cfg), z_p, y_mask, a.runs, a.warmup)
        add("torch-compile", out, st, f"max-autotune, fp32, compile {compile_s:.0f} s")
    for n in threads:
        out, st, ver = time_ort(path, z_p, y_mask, max(3, a.runs // 4), 1, n)
        add("ort-cpu" + (f"-t{n}" if n else ""), out, st, f"onnxruntime {ver}, {n or os.cpu_count()} threads")
    for target, mode in [(t, m) for t in a.targets.split(",") for m in a.modes.split(",")]:
        for n in threads if target == "cpu" else [None]:
            runs = a.runs if target != "cpu" else max(3, a.runs // 4)
            out, res = time_lockstep(a.lockstep, path, inputs, target, runs, a.warmup, a.out, n, mode)
            name = "lockstep-" + target + (f"-t{n}" if n else "") + ("-spec" if mode == "specialise" else "")
            if out is None:
                rows.append({"name": name, "note": "failed (see above)"})
                continue
            add(name, out, {k: res[k] for k in ("min_ms", "median_ms", "max_ms")},
                f"compile {res['compile_ms'] / 1e3:.1f} s, bit-identical runs: {res['bit_identical']}")
    json.dump({"config": cfg, "name": a.config, "T": a.T, "rows": rows}, open(os.path.join(a.out, "compare.json"), "w"), indent=2)
    print(f"\n== VITS decoder side (channels {cfg['channels']}, HiFi-GAN from {cfg['up_initial']}), T={a.T} "
          f"frames -> {a.T * int(np.prod(cfg['up_rates']))} samples; per run, host to host")
    print(f"{'engine':<22} {'median ms':>10} {'min ms':>9} {'rel L2 audio':>13} {'rel L2 z':>10}  note")
    for r in rows:
        if "median_ms" not in r:
            print(f"{r['name']:<22} {'-':>10} {'-':>9} {'-':>13} {'-':>10}  {r['note']}")
            continue
        print(f"{r['name']:<22} {r['median_ms']:>10.3f} {r['min_ms']:>9.3f} {r['rel_l2_audio']:>13.2e} "
              f"{r['rel_l2_z']:>10.2e}  {r['note']}")


def _clone(model, cfg):
    m = vr.VitsDecoderSide(cfg)
    m.load_state_dict(model.state_dict())
    return m


if __name__ == "__main__":
    main()
