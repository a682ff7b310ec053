#!/usr/bin/env python3
"""What limits each class of kernel, from the hardware counters (Nsight Compute).

Runs `lockstep bench --per-kernel --json` once for each kernel's kind, counted work and bytes,
then `lockstep run --no-replay` under `ncu` for the counters of every launch, joins the two by
launch order, and prints per kind: the kernels' time under ncu (caches flushed before each),
the FMA pipe's and the load/store unit's busy share, L1, L2 and DRAM throughput, issue slots
used, occupancy and the warp stall reasons that dominate. Needs a CUDA device and `ncu`.

  ncu_classes.py --lockstep BIN --out DIR MODEL.onnx -- --specialise --seed-inputs vits
  ncu_classes.py --analyse DIR          (again from DIR/bench.json and DIR/ncu.csv)
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys

RATES = {  # short name: metric (time-weighted mean over a kind's kernels)
    "fma": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "lsu": "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "l1": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "l2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "issue": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
}
TIME = "gpu__time_duration.sum"
STALLS = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "math_pipe_throttle", "wait",
          "not_selected", "selected", "dispatch_stall", "no_instruction", "tex_throttle", "membar", "drain", "imc_miss",
          "branch_resolving", "sleeping", "misc"]


def stall_metric(reason):
    return "smsp__warp_issue_stalled_%s_per_warp_active.pct" % reason


def measure(args):
    os.makedirs(args.out, exist_ok=True)
    flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
    bench = [args.lockstep, "bench", args.model, "--target", "cuda", "--runs", "3", "--per-kernel", "--json",
             os.path.join(args.out, "bench.json")] + flags
    subprocess.run(bench, check=True, stdout=subprocess.DEVNULL)
    metrics = ",".join([TIME] + list(RATES.values()) + [stall_metric(r) for r in STALLS])
    run = ["ncu", "--clock-control", "none", "--metrics", metrics, "--csv", args.lockstep, "run", args.model, "--target",
           "cuda", "--no-replay"] + flags
    with open(os.path.join(args.out, "ncu.csv"), "w") as f:
        subprocess.run(run, check=True, stdout=f)


def launches(csv_path):
    """Each profiled launch in order: its function name and metric values."""
    rows = [r for r in csv.reader(open(csv_path)) if len(r) > 10]
    if not rows:
        sys.exit("no ncu rows in " + csv_path)
    h = rows[0]
    at = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    by_id = collections.OrderedDict()
    for r in rows[1:]:
        m = by_id.setdefault(int(r[at["ID"]]), {"function": r[at["Kernel Name"]]})
        try:
            m[r[at["Metric Name"]]] = float(r[at["Metric Value"]].replace(",", ""))
        except ValueError:
            pass  # a metric this device does not count
    return [by_id[i] for i in sorted(by_id)]


def joined(out):
    kernels = sorted(json.load(open(os.path.join(out, "bench.json")))["kernels"], key=lambda k: k["launch"])
    counted = launches(os.path.join(out, "ncu.csv"))
    if len(counted) != len(kernels):
        sys.exit("ncu saw %d launches, the plan has %d kernels" % (len(counted), len(kernels)))
    names = [k["kernel"] for k in kernels]
    for i, (k, c) in enumerate(zip(kernels, counted)):
        if c["function"] not in names[: i + 1]:  # its own function or that of an earlier kernel sharing its code
            sys.exit("launch %d ran %s, not %s's function" % (i, c["function"], k["kernel"]))
        c.update(k)
    return counted


def report(out):
    by_kind = collections.defaultdict(list)
    for k in joined(out):
        by_kind[k["kind"]].append(k)
    summary = {}
    for kind, ks in sorted(by_kind.items()):
        t = sum(k.get(TIME, 0) for k in ks)  # ns
        if t <= 0:
            continue
        mean = lambda m: sum(k.get(m, 0) * k.get(TIME, 0) for k in ks) / t
        stalls = {r: mean(stall_metric(r)) for r in STALLS}
        total = sum(stalls.values()) or 1
        s = {"kernels": len(ks), "ncu_us": t / 1e3, "tflops": sum(k["flops"] for k in ks) / t / 1e3,
             "gbs": sum(k["bytes"] for k in ks) / t, **{n: mean(m) for n, m in RATES.items()},
             "stalls": {r: 100 * v / total for r, v in sorted(stalls.items(), key=lambda x: -x[1])}}
        summary[kind] = s
        print("%-12s %3d kernels  %8.1f us  %6.1f TFLOP/s  %6.0f GB/s  " % (kind, len(ks), s["ncu_us"], s["tflops"], s["gbs"]) +
              "  ".join("%s %.0f%%" % (n, s[n]) for n in RATES))
        print("%-12s stalls: " % "" + ", ".join("%s %.0f%%" % (r, v) for r, v in list(s["stalls"].items())[:5]))
    json.dump(summary, open(os.path.join(out, "classes.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lockstep", help="the lockstep binary")
    ap.add_argument("--out", help="folder for bench.json, ncu.csv and classes.json")
    ap.add_argument("--analyse", metavar="DIR", help="only report from an earlier --out folder")
    ap.add_argument("model", nargs="?")
    ap.add_argument("flags", nargs=argparse.REMAINDER, help="lockstep flags for both runs, after --")
    args = ap.parse_args()
    if args.analyse:
        return report(args.analyse)
    if not (args.lockstep and args.out and args.model):
        ap.error("--lockstep, --out and MODEL are needed to measure")
    measure(args)
    report(args.out)


if __name__ == "__main__":
    main()
