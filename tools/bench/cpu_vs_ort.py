#!/usr/bin/env python3
"""lockstep's cpu target against ONNX Runtime's CPU provider, same machine, same threads.

Models from lockstep-vitsgen: the 174-node flow cut and the 128-channel decoder, T=1024, with
`--seed-inputs vits` values (z_p[b,c,t] = 0.5 sin(2 pi (3c + t) / 128), y_mask = 1). For each
thread count, the median of `lockstep bench --runs R` and of R ONNX Runtime runs after warm-up,
interleaved so that machine noise falls on both. `--symbolic` adds the flow cut with a symbolic
T (lockstep's one compile for every length, bound at T=1024). ONNX Runtime from Python's
`onnxruntime`, or with `--node DIR` from npm's `onnxruntime-node` installed in DIR
(`npm install --ignore-scripts onnxruntime-node`), through tools/bench/ort_node.js.
Usage: cpu_vs_ort.py BIN_DIR [--threads 2,0] [--runs 20] [--rounds 3] [--symbolic] [--node DIR]
       (0 threads: all cores)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CUT = ["--part", "flow", "--cut", "/flow/flows.0/enc/in_layers.1/Conv"]
MODELS = {
    "flow cut 174": CUT,
    "decoder128": ["--part", "decoder", "--upsample-channels", "128", "--T", "1024"],
}
SYMBOLIC = {"flow cut 174 T": CUT + ["--T", "T"]}
ORT_NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_node.js")


def seed_inputs(sess):
    import numpy as np
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1024 for d in i.shape]
        if "mask" in i.name:
            feeds[i.name] = np.ones(shape, np.float32)
        else:
            c = np.arange(shape[1]).reshape(1, -1, 1)
            t = np.arange(shape[2]).reshape(1, 1, -1)
            feeds[i.name] = (0.5 * np.sin(2 * np.pi * (3 * c + t) / 128)).astype(np.float32)
    return feeds


def lockstep_ms(ls, model, threads, runs, out, dims):
    j = os.path.join(out, "bench.json")
    subprocess.run([ls, "bench", model, "--target", "cpu", "--threads", str(threads), "--seed-inputs", "vits",
                    "--runs", str(runs), "--warmup", "3", "--json", j] + dims, check=True, capture_output=True)
    with open(j) as f:
        data = json.load(f)
    return data["median_ms"]


def ort_node_ms(node_dir, model, threads, runs):
    env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
    out = subprocess.run(["node", ORT_NODE, model, str(threads), str(runs), "1024"], check=True,
                         capture_output=True, text=True, env=env).stdout
    r = json.loads(out)
    return r["median_ms"], r["version"]


def ort_ms(model, threads, runs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads  # 0: ONNX Runtime's default, all physical cores
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = seed_inputs(sess)
    for _ in range(3):
        sess.run(None, feeds)
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        ms.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ms), ort.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--threads", default="2,0")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--symbolic", action="store_true", help="also the flow cut with a symbolic T")
    ap.add_argument("--node", help="folder where npm installed onnxruntime-node")
    a = ap.parse_args()
    ls = os.path.join(a.bin, "lockstep")
    gen = os.path.join(a.bin, "lockstep-vitsgen")
    work = tempfile.mkdtemp()
    rows = []
    version = ""
    models = dict(MODELS, **(SYMBOLIC if a.symbolic else {}))
    for name, args in models.items():
        model = os.path.join(work, name.replace(" ", "_") + ".onnx")
        subprocess.run([gen, *args, "-o", model], check=True, capture_output=True)
        dims = ["--dim", "T=1024"] if "T" in args else []
        for th in [int(x) for x in a.threads.split(",")]:
            ls_ms, ort_all = [], []
            for _ in range(a.rounds):
                ls_ms.append(lockstep_ms(ls, model, th, a.runs, work, dims))
                ms, version = ort_node_ms(a.node, model, th, a.runs) if a.node else ort_ms(model, th, a.runs)
                ort_all.append(ms)
            rows.append((name, th or os.cpu_count(), statistics.median(ls_ms), statistics.median(ort_all)))
    print(f"{'model':14} {'threads':>7} {'lockstep ms':>12} {'ORT ms':>9} {'lockstep/ORT':>13}")
    for name, th, l, o in rows:
        print(f"{name:14} {th:>7} {l:>12.2f} {o:>9.2f} {l / o:>12.2f}x")
    print(f"onnxruntime {version}{' (node)' if a.node else ''}; medians of {a.rounds} rounds of {a.runs} runs, rounds interleaved")


if __name__ == "__main__":
    sys.exit(main())
