#!/usr/bin/env python3
"""tools/calibrate.py: time each task's PyTorch expression (the task.json
`torch` field) in eager mode and under torch.compile on the task's benchmark
shape, with the grader's protocol, and write bank/calibration/<gpu>.json.

Protocol (the grader's, docs/task-format.md "Calibration"):
  - inputs: the task's dtypes and shapes, values drawn like its dists
    (normal: mean + std * randn clamped to +-6 std; uniform: [lo, hi);
    int: integers in [lo, hi]) with torch's generator (the values matter
    little for timing; the dtypes and shapes do);
  - TF32 off (torch.backends.cuda.matmul.allow_tf32 = False, cudnn too) so
    fp32 tasks run true fp32, as the grader's fp32 tolerance requires;
  - every timed call is preceded by a write of a 256 MiB buffer (cold L2),
    timed alone between two CUDA events; warm-up calls first (and
    torch.compile's compilation) are not timed;
  - median of --samples (>= 50) calls, with a 95% bootstrap confidence
    interval of the median (1000 resamples).

The `torch` field becomes the body of `def _ka_fn(<inputs>): return <torch>`
with these names bound: `torch`, `F` (torch.nn.functional), each parameter
by its name as a Python int (the bench shape's value, a global), each input
by its name as a CUDA tensor (an argument); eager mode calls _ka_fn,
compiled mode torch.compile(_ka_fn, dynamic=False). It must be one
expression whose value is the output tensor, or a tuple of them in the task's
output order.

Runs only where PyTorch and a CUDA GPU exist: otherwise it prints why and
exits 2. Usage:
  tools/calibrate.py [--samples N] [--out FILE] [--only NAME,...] [BANK_DIR]
"""
import argparse
import datetime
import json
import os
import random
import statistics
import sys


def find_tasks(bank):
    out = []
    for root, dirs, files in os.walk(bank):
        dirs.sort()
        if "task.json" in files:
            out.append(root)
    return sorted(out)


def draw(torch, spec, shape, env):
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
          "fp64": torch.float64, "int32": torch.int32, "int64": torch.int64,
          "bool": torch.bool, "int8": torch.int8, "uint8": torch.uint8}[spec["dtype"]]
    d = spec["dist"]
    dev = "cuda"
    if d["kind"] == "int":  # a bound may be an expression over the parameters ("V - 1")
        from ref_numpy import dist_bound
        lo, hi = dist_bound(d, "lo", env), dist_bound(d, "hi", env)
        return torch.randint(int(lo), int(hi) + 1, shape, device=dev, dtype=torch.int64).to(dt)
    if d["kind"] == "normal":
        z = torch.randn(shape, device=dev, dtype=torch.float32).clamp_(-6, 6)
        return (d["mean"] + d["std"] * z).to(dt)
    u = torch.rand(shape, device=dev, dtype=torch.float32)
    return (d["lo"] + (d["hi"] - d["lo"]) * u).to(dt)


def bootstrap_ci(xs, reps=1000, seed=1):
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps))
    return [meds[int(0.025 * reps)], meds[int(0.975 * reps) - 1]]


def time_fn(torch, fn, samples, flush):
    for _ in range(5):  # warm-up (and, for compiled, compilation)
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        flush.fill_(1)  # evict L2: 256 MiB of writes
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)  # us
    return {"median_us": statistics.median(times), "ci95_us": bootstrap_ci(times), "n": len(times)}


def save(path, gpu, torch, samples, tasks):
    """Write the calibration file atomically (a temporary file, then rename)."""
    out = {
        "format": "ka-calibration/1",
        "gpu": gpu,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "protocol": {"l2_flush_bytes": 256 << 20, "timer": "cuda events, one call per pair",
                     "statistic": "median", "samples": samples, "ci": "bootstrap 95%, 1000 resamples",
                     "tf32": False, "compile": "torch.compile(dynamic=False), default mode"},
        "tasks": tasks,
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bank", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bank"))
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--out", help="default: <bank>/calibration/<gpu name>.json")
    ap.add_argument("--only", help="comma-separated task names")
    a = ap.parse_args()
    if a.samples < 50:
        ap.error("--samples must be at least 50")
    try:
        import torch
    except ImportError:
        print("calibrate.py: PyTorch is not installed; run it on a machine with PyTorch and a GPU", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("calibrate.py: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 2
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.get_device_name(0)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    only = set(a.only.split(",")) if a.only else None
    path = a.out or os.path.join(a.bank, "calibration", gpu.replace(" ", "_").replace("/", "_") + ".json")
    tasks = {}
    if os.path.exists(path):  # --only updates some tasks and keeps the rest
        with open(path) as f:
            old = json.load(f)
        if old.get("format") == "ka-calibration/1" and old.get("gpu") == gpu:
            tasks = old.get("tasks", {})
    rc = 0
    for tdir in find_tasks(os.path.join(a.bank, "public") if os.path.isdir(os.path.join(a.bank, "public")) else a.bank):
        with open(os.path.join(tdir, "task.json")) as f:
            task = json.load(f)
        if only and task["name"] not in only:
            continue
        env = dict(task["bench"])
        scope = {"torch": torch, "F": F}
        scope.update(env)
        scope.update({sc["name"]: float(sc["value"]) for sc in task.get("scalars", [])})
        try:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from ref_numpy import eval_expr  # the shape-expression grammar

            torch.manual_seed(0)
            args = [draw(torch, s, [eval_expr(d, env) for d in s["shape"]], env) for s in task["inputs"]]
            # A real function (parameters as globals, inputs as arguments), so
            # that torch.compile traces the expression itself.
            src = "def _ka_fn(%s):\n    return %s\n" % (", ".join(s["name"] for s in task["inputs"]), task["torch"])
            exec(compile(src, "<%s torch>" % task["name"], "exec"), scope)
            fn = scope["_ka_fn"]
            cfn = torch.compile(fn, dynamic=False)
            eager = lambda: fn(*args)  # noqa: E731
            compiled = lambda: cfn(*args)  # noqa: E731
            rec = {"tier": task["tier"], "shape": env, "torch": task["torch"],
                   "eager": time_fn(torch, eager, a.samples, flush),
                   "compiled": time_fn(torch, compiled, a.samples, flush)}
            torch._dynamo.reset()
        except Exception as e:  # one task's failure is recorded, the rest still run
            rec = {"tier": task["tier"], "shape": env, "torch": task["torch"], "error": "%s: %s" % (type(e).__name__, e)}
            rc = 1
        tasks[task["name"]] = rec
        save(path, gpu, torch, a.samples, tasks)  # after every task: a killed run keeps what it measured
        print("%-24s %s" % (task["name"], rec.get("error") or "eager %.1f us, compiled %.1f us" %
                                                        (rec["eager"]["median_us"], rec["compiled"]["median_us"])))
    print("wrote %s" % path)
    return rc


if __name__ == "__main__":
    sys.exit(main())
