#!/usr/bin/env python3
"""tools/calibrate.py: time each task's PyTorch expression in eager mode and
under torch.compile on the task's benchmark shape, with the grader's
protocol, and write bank/calibration/<gpu>.json.

The expression timed is the form the task's eager.cu and compiled.cu mirror:
its `baseline_torch` field where it has one (the attention tasks: the math
written out op by op, issue 15), else its `torch` field. Where the two
differ, the `torch` field (the task's statement, for attention
F.scaled_dot_product_attention, which PyTorch runs as a fused flash kernel)
is timed too, into the record's "statement", and the two forms' outputs on
the same inputs are compared: "vs_statement" is the largest
|baseline - statement| / (atol + rtol |statement|), and a form that differs
by more than twice the task's tolerance is an error (it computes something
else).

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

--kernels FILE appends, for every expression timed, the CUDA kernels it
launches in each mode (tools/torch_kernels.py's profiler listing, as JSON
lines {task, form, eager: [names], compiled: [names]}), from the functions
already compiled for the timing.

Runs only where PyTorch and a CUDA GPU exist: otherwise it prints why and
exits 2. Usage:
  tools/calibrate.py [--samples N] [--out FILE] [--only NAME,...] [--kernels FILE] [BANK_DIR]
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


def baseline_expr(task):
    """The PyTorch form the task's baselines mirror: baseline_torch, else torch."""
    return task.get("baseline_torch") or task["torch"]


def build_fn(task, expr, scope):
    """`def _ka_fn(<inputs>): return <expr>` in a copy of scope: a real
    function (parameters as globals, inputs as arguments), so that
    torch.compile traces the expression itself."""
    ns = dict(scope)
    src = "def _ka_fn(%s):\n    return %s\n" % (", ".join(s["name"] for s in task["inputs"]), expr)
    exec(compile(src, "<%s torch>" % task["name"], "exec"), ns)
    return ns["_ka_fn"]


def time_modes(torch, fn, args, samples, flush, listing=None):
    """{"eager": stats, "compiled": stats} of fn(*args); with listing (a dict),
    also listing["eager"/"compiled"] = the CUDA kernels each mode launches."""
    cfn = torch.compile(fn, dynamic=False)
    res = {"eager": time_fn(torch, lambda: fn(*args), samples, flush),
           "compiled": time_fn(torch, lambda: cfn(*args), samples, flush)}
    if listing is not None:
        from torch_kernels import kernels
        listing["eager"], listing["compiled"] = kernels(torch, fn, args), kernels(torch, cfn, args)
    torch._dynamo.reset()
    return res


def vs_statement(torch, a, b, atol, rtol):
    """Largest |a - b| / (atol + rtol |b|) over the outputs (tensors or tuples)."""
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    worst = 0.0
    for x, y in zip(a, b):
        x, y = x.double(), y.double()
        worst = max(worst, float(((x - y).abs() / (atol + rtol * y.abs())).max()))
    return worst


def calibrate_task(torch, task, scope, args, samples, flush, kernels_out):
    """The calibration record of one task (raises on a failing expression)."""
    expr = baseline_expr(task)
    rec = {"tier": task["tier"], "shape": dict(task["bench"]), "torch": task["torch"]}
    forms = [("baseline", expr)]
    if expr != task["torch"]:
        rec["baseline_torch"] = expr
        forms.append(("statement", task["torch"]))
    outs = {}
    for form, text in forms:
        fn = build_fn(task, text, scope)
        outs[form] = fn(*args)
        listing = {} if kernels_out else None
        t = time_modes(torch, fn, args, samples, flush, listing)
        if form == "baseline":
            rec.update(t)
        else:
            rec["statement"] = t
        if kernels_out:
            kernels_out.write(json.dumps(dict(task=task["name"], form=form, **listing)) + "\n")
            kernels_out.flush()
    if "statement" in outs:
        tol = task["tolerance"]
        rec["vs_statement"] = vs_statement(torch, outs["baseline"], outs["statement"], tol["atol"], tol["rtol"])
        if not rec["vs_statement"] <= 2.0:
            raise ValueError("baseline_torch differs from torch by %.3g x the tolerance" % rec["vs_statement"])
    return rec


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
    ap.add_argument("--kernels", help="JSON lines file for the kernels of each timed form")
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
    kernels_out = open(a.kernels, "a") if a.kernels else None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ref_numpy import eval_expr  # the shape-expression grammar

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
            torch.manual_seed(0)
            args = [draw(torch, s, [eval_expr(d, env) for d in s["shape"]], env) for s in task["inputs"]]
            rec = calibrate_task(torch, task, scope, args, a.samples, flush, kernels_out)
        except Exception as e:  # one task's failure is recorded, the rest still run
            torch._dynamo.reset()
            rec = {"tier": task["tier"], "shape": env, "torch": task["torch"], "error": "%s: %s" % (type(e).__name__, e)}
            if task.get("baseline_torch"):
                rec["baseline_torch"] = task["baseline_torch"]
            rc = 1
        tasks[task["name"]] = rec
        save(path, gpu, torch, a.samples, tasks)  # after every task: a killed run keeps what it measured
        line = rec.get("error") or "eager %.1f us, compiled %.1f us" % (rec["eager"]["median_us"], rec["compiled"]["median_us"])
        if "statement" in rec:
            line += " (statement: eager %.1f us, compiled %.1f us; outputs within %.2f x the tolerance)" % (
                rec["statement"]["eager"]["median_us"], rec["statement"]["compiled"]["median_us"], rec["vs_statement"])
        print("%-24s %s" % (task["name"], line))
    print("wrote %s" % path)
    return rc


if __name__ == "__main__":
    sys.exit(main())
