#!/usr/bin/env python3
"""tools/bank_table.py OUT: the table of tools/bank_gpu.sh, from
OUT/bank_gpu.jsonl (one grade result per task) and, where it exists,
bank/calibration/<gpu>.json (tools/calibrate.py; the GPU's name is the one
the grades recorded): per task the verdict, the solution's time, eager.cu and
compiled.cu times, speedups with their CIs, and eager.cu / torch eager and
compiled.cu / torch.compile, then the tasks with a ratio out of the band. PyTorch's side is the calibration of the form
the baselines mirror (the task's baseline_torch, else its torch field): a
calibration record of another form (the task changed since it was
calibrated) gives no ratio and is counted as stale. Where the calibration
also timed the task's statement (its torch field, when baseline_torch
differs: F.scaled_dot_product_attention for attention), a second table gives
those times and the solution's speedup over them. Writes OUT/bank_gpu.md;
prints its last line. Runs anywhere (no GPU needed), so a table can be
rebuilt after calibrating."""
import json, os, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(out, "bank_gpu.jsonl"))]
gpu = next((r["device"]["name"] for r in rows if isinstance(r.get("device"), dict) and r["device"].get("name")), "unknown GPU")
cal = {}
p = os.path.join("bank", "calibration", gpu.replace(" ", "_") + ".json")
if os.path.exists(p):
    cal = json.load(open(p)).get("tasks", {})
def fig(f):
    return None if not f else f.get("median")
def ci(f):
    return "-" if not f else "%.2fx [%.2f, %.2f]" % (f["median"], f["lo"], f["hi"])
def form(task_dir):
    """The PyTorch form the task's baselines mirror (None: no task.json)."""
    try:
        t = json.load(open(os.path.join(task_dir, "task.json")))
    except (OSError, ValueError):
        return None
    return t.get("baseline_torch") or t.get("torch")
def med(rec, mode):
    return (rec.get(mode) or {}).get("median_us")
f = lambda x: "%.1f" % x if x else "-"  # noqa: E731
def in_band(e_ratio, c_ratio):
    """Both baseline ratios within the issue's band [0.8, 1.25]."""
    return 0.8 <= e_ratio <= 1.25 and 0.8 <= c_ratio <= 1.25
lines = ["| task | verdict | solution us | eager.cu us | compiled.cu us | vs eager | vs compiled | eager.cu / torch eager | compiled.cu / torch.compile |",
         "|---|---|---|---|---|---|---|---|---|"]
stmt = []
ok = 0
ratios = []
outside = []  # tasks with a ratio out of the band, with both ratios
stale = []
for r in rows:
    name = os.path.basename(r["task_dir"])
    v = r.get("verdict")
    ok += v == "ok"
    t, e, c = fig(r.get("time_us")), fig(r.get("eager_us")), fig(r.get("compiled_us"))
    ce = cal.get(name, {})
    te, tc = med(ce, "eager"), med(ce, "compiled")
    want = form(r["task_dir"])
    if ce and want and (ce.get("baseline_torch") or ce.get("torch")) != want:
        stale.append(name)
        te = tc = None
    re_ = "%.2f" % (e / te) if e and te else "-"
    rc_ = "%.2f" % (c / tc) if c and tc else "-"
    if e and te and c and tc:
        ratios.append((e / te, c / tc))
        if not in_band(e / te, c / tc):
            outside.append("%s (%.3f, %.3f)" % (name, e / te, c / tc))
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, v, f(t), f(e), f(c), ci(r.get("speedup_eager")), ci(r.get("speedup_compiled")), re_, rc_))
    st = ce.get("statement") or {}
    se, sc = med(st, "eager"), med(st, "compiled")
    if se or sc:
        stmt.append("| %s | %s | %s | %s | %s |" % (name, f(se), f(sc), f(t),
                                                    "%.2fx" % (se / t) if se and t else "-"))
if stmt:
    lines += ["", "PyTorch's time for the task's statement (its torch field) where the baselines mirror another form:", "",
              "| task | statement eager us | statement torch.compile us | solution us | solution vs statement eager |",
              "|---|---|---|---|---|"] + stmt
lines.append("")
if stale:
    lines.append("calibrated in another PyTorch form than the baselines mirror (re-run tools/calibrate.py --only %s): no ratio"
                 % ",".join(stale))
if outside:
    lines.append("out of the band [0.8, 1.25] (eager, compiled ratio): " + ", ".join(outside))
lines.append("%d of %d solutions ok; %d of %d tasks with both baseline ratios in [0.8, 1.25] (GPU: %s)"
             % (ok, len(rows), sum(1 for a, b in ratios if in_band(a, b)), len(ratios), gpu))
open(os.path.join(out, "bank_gpu.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines[-1:]))
