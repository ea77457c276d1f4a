#!/usr/bin/env python3
"""tools/torch_kernels.py: list the CUDA kernels PyTorch launches for each
task's baseline expression (`baseline_torch`, else `torch`: the form
tools/calibrate.py times), in eager mode and under torch.compile, on the
benchmark shape (inputs drawn as tools/calibrate.py draws them). This is
what a task's eager.cu and compiled.cu mirror (docs/task-format.md,
"Baselines"): one launch per kernel listed here. Writes JSON lines
{task, eager: [names], compiled: [names]} to --out (default stdout); with
--launches each kernel is {name, grid, block, registers, shared_bytes}
instead, the launch configuration from the profiler's trace.

Runs only where PyTorch and a CUDA GPU exist: otherwise it says why and
exits 2. Usage: tools/torch_kernels.py [--only NAME,...] [--launches] [--out FILE] [BANK_DIR]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibrate import baseline_expr, build_fn, draw, find_tasks  # noqa: E402
from ref_numpy import eval_expr  # noqa: E402


def _profile(torch, fn, args):
    """The profiler of one call of fn(*args), after a warm-up call."""
    from torch.profiler import ProfilerActivity, profile
    fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return prof


def kernels(torch, fn, args):
    """The names of the CUDA kernels one call of fn(*args) launches, in order."""
    return [e.name for e in _profile(torch, fn, args).events() if e.device_type.name == "CUDA"]


def launches(torch, fn, args):
    """The kernels one call of fn(*args) launches, in order, each
    {name, grid, block, registers, shared_bytes} from the profiler's trace."""
    import tempfile
    prof = _profile(torch, fn, args)
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    out = []
    for e in sorted(trace.get("traceEvents", []), key=lambda e: e.get("ts", 0)):
        if e.get("cat") != "kernel":
            continue
        g = e.get("args", {})
        out.append({"name": e.get("name"), "grid": g.get("grid"), "block": g.get("block"),
                    "registers": g.get("registers per thread"), "shared_bytes": g.get("shared memory")})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bank", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bank"))
    ap.add_argument("--only", help="comma-separated task names")
    ap.add_argument("--out", help="JSON lines file (default: stdout)")
    ap.add_argument("--launches", action="store_true", help="each kernel with its grid, block, registers, shared memory")
    a = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_kernels.py: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_kernels.py: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    only = set(a.only.split(",")) if a.only else None
    out = open(a.out, "w") if a.out else sys.stdout
    root = os.path.join(a.bank, "public") if os.path.isdir(os.path.join(a.bank, "public")) else a.bank
    for tdir in find_tasks(root):
        task = json.load(open(os.path.join(tdir, "task.json")))
        if only and task["name"] not in only:
            continue
        env = dict(task["bench"])
        scope = {"torch": torch, "F": F}
        scope.update(env)
        scope.update({sc["name"]: float(sc["value"]) for sc in task.get("scalars", [])})
        rec = {"task": task["name"]}
        try:
            args = [draw(torch, s, [eval_expr(d, env) for d in s["shape"]], env) for s in task["inputs"]]
            fn = build_fn(task, baseline_expr(task), scope)
            listing = launches if a.launches else kernels
            rec["eager"] = listing(torch, fn, args)
            rec["compiled"] = listing(torch, torch.compile(fn, dynamic=False), args)
            torch._dynamo.reset()
        except Exception as e:  # one task's failure is recorded, the rest still run
            rec["error"] = "%s: %s" % (type(e).__name__, e)
        out.write(json.dumps(rec) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
