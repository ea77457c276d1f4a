#!/usr/bin/env python3
"""run.py: runs the bank's trusted CUDA code on the CPU emulator against the
fp64 gold (docs/cuda-emu.md).

  python3 tools/cuda_emu/run.py [--tasks NAME,...] [--variants eager,compiled,solution]
                                [--shapes all|smallest|bench|I,...] [-j N] [--work DIR] [--json FILE]
                                [--source FILE.cu,...] [--order scrambled|linear] [--seed S]

For each task of the bank (or those named: a task name, or a tier L1, L2,
L3) and each variant (its eager.cu, compiled.cu, solutions/cuda.cu), the
source and bank/lib are rewritten by xform.py, compiled with g++ against
emu.h and linked with the emulator (emu.cpp, blas.cpp, driver.cpp); for each
check shape `ka gold --inputs` writes the inputs (the grader's generator,
seed 1, --input-seed) and the gold, and the binary checks every output element against it
with the task's tolerance. --source runs other files as baselines of the
tasks named instead (the harness's own tests). Prints one line per task and
variant (pass/FAIL,
the largest error as a fraction of the tolerance over the shapes run), the
reasons of the failures, and exits 0 when every run passed, 1 when one
failed, 2 on bad usage or a missing tool (g++, CUDA's headers, build/ka).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EMU = os.path.join(ROOT, "tools", "cuda_emu")
VARIANTS = {"eager": "eager.cu", "compiled": "compiled.cu", "solution": "solutions/cuda.cu"}
CXXFLAGS = ["-std=c++17", "-O2", "-g", "-fno-strict-aliasing", "-fwrapv", "-Wall", "-Wno-sign-compare",
            "-Wno-unknown-pragmas", "-Wno-unused-function", "-Wno-unused-variable"]


def die(msg):
    print("run.py: " + msg, file=sys.stderr)
    sys.exit(2)


def cuda_include():
    for d in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        if d and os.path.isfile(os.path.join(d, "include", "cuda_fp16.h")) and os.path.isfile(
                os.path.join(d, "include", "cublasLt.h")):
            return os.path.join(d, "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        d = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
        if os.path.isfile(os.path.join(d, "cuda_fp16.h")):
            return d
    return None


def sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def run(cmd, timeout=None, cwd=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace")


# The expression language of task.json (src/expr.h): tools/ref_numpy.py's.
sys.path.insert(0, os.path.join(ROOT, "tools"))
from ref_numpy import eval_expr, numel as eval_numel  # noqa: E402


# ---- building ------------------------------------------------------------------------

class Build:
    def __init__(self, work, inc_cuda):
        self.work = work
        self.inc = ["-I" + os.path.join(EMU, "include"), "-I" + EMU, "-I" + inc_cuda,
                    "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "src", "common")]
        self.lock = threading.Lock()
        os.makedirs(os.path.join(work, "rt"), exist_ok=True)
        self.rt_key = sha(*[open(os.path.join(EMU, f), "rb").read()
                            for f in ("emu.h", "emu_rt.h", "emu.cpp", "blas.cpp", "driver.cpp",
                                      "include/cuda_pipeline.h")], " ".join(CXXFLAGS))
        self.objs = []
        for f in ("emu", "blas", "driver"):
            o = os.path.join(work, "rt", "%s-%s.o" % (f, self.rt_key))
            if not os.path.isfile(o):
                rc, out = run(["g++"] + CXXFLAGS + self.inc + ["-c", os.path.join(EMU, f + ".cpp"), "-o", o + ".tmp"])
                if rc:
                    die("the emulator does not compile:\n" + out)
                os.replace(o + ".tmp", o)
            self.objs.append(o)
        # bank/lib rewritten once
        self.lib = os.path.join(work, "lib")
        os.makedirs(self.lib, exist_ok=True)
        texts = []
        for h in sorted(os.listdir(os.path.join(ROOT, "bank", "lib"))):
            rc, out = run([sys.executable, os.path.join(EMU, "xform.py"), os.path.join(ROOT, "bank", "lib", h),
                           os.path.join(self.lib, h)])
            if rc:
                die(out)
            texts.append(open(os.path.join(self.lib, h)).read())
        self.lib_key = sha(*texts)

    def binary(self, task_dir, variant, src):
        """(path, None) of the emulated binary of src as a task's variant,
        or (None, why) when it does not rewrite or compile."""
        name = "%s-%s-%s" % (os.path.basename(os.path.dirname(task_dir)), os.path.basename(task_dir), variant)
        tu = os.path.join(self.work, "tu", name + ".cpp")
        os.makedirs(os.path.dirname(tu), exist_ok=True)
        rc, out = run([sys.executable, os.path.join(EMU, "xform.py"), src, tu])
        if rc:
            return None, "rewrite: " + out.strip()
        key = sha(open(tu).read(), self.lib_key, self.rt_key)
        binp = os.path.join(self.work, "bin", name)
        os.makedirs(os.path.dirname(binp), exist_ok=True)
        kf = binp + ".key"
        if os.path.isfile(binp) and os.path.isfile(kf) and open(kf).read() == key:
            return binp, None
        obj = binp + ".o"
        cmd = ["g++"] + CXXFLAGS + ["-I" + self.lib, "-I" + task_dir] + self.inc + [
            "-include", "emu.h", "-c", tu, "-o", obj]
        rc, out = run(cmd)
        if rc:
            errs = [l for l in out.splitlines() if "error" in l][:6]
            return None, "compile: " + " | ".join(errs or out.splitlines()[-6:])
        rc, out = run(["g++", obj] + self.objs + ["-o", binp + ".tmp", "-lm"])
        if rc:
            return None, "link: " + " | ".join(out.splitlines()[-6:])
        os.replace(binp + ".tmp", binp)
        with open(binp + ".key", "w") as f:
            f.write(key)
        return binp, None


# ---- one task ------------------------------------------------------------------------

def shape_str(task, shape):
    return ",".join("%s=%d" % (p, shape[p]) for p in task["params"])


def select_shapes(task, how):
    """The shapes --shapes names: a comma-separated list of all (every
    check shape), smallest (the check shape with the fewest elements), bench
    (the benchmark shape) and check indices."""
    checks, out = task["checks"], []

    def size(c):
        return sum(eval_numel(t, c) for t in task["inputs"] + task["outputs"])

    for w in how.split(","):
        if w == "all":
            out += checks
        elif w == "smallest":
            out.append(min(checks, key=size))
        elif w == "bench":
            out.append(task["bench"])
        elif int(w) < len(checks):
            out.append(checks[int(w)])
    return out


class Gold:
    """`ka gold --inputs` of a task at a shape, once per run."""

    def __init__(self, work, ka, seed):
        self.work, self.ka, self.seed = work, ka, seed
        self.locks = {}
        self.lock = threading.Lock()

    def get(self, task_dir, shape_s):
        d = os.path.join(self.work, "gold", sha(task_dir, shape_s, str(self.seed)))
        with self.lock:
            lk = self.locks.setdefault(d, threading.Lock())
        with lk:
            stamp = os.path.join(d, ".ok")
            key = sha(open(os.path.join(task_dir, "task.json"), "rb").read(),
                      open(os.path.join(task_dir, "ref.c"), "rb").read())
            if not (os.path.isfile(stamp) and open(stamp).read() == key):
                shutil.rmtree(d, ignore_errors=True)
                rc, out = run([self.ka, "gold", "--task", task_dir, "--shape", shape_s, "--seed", str(self.seed),
                               "-o", d, "--inputs"])
                if rc:
                    return None, "ka gold: " + out.strip()[-300:]
                with open(stamp, "w") as f:
                    f.write(key)
            return d, None


def run_variant(build, gold, task_dir, task, variant, src, shapes, args):
    """{'status': pass|fail, 'maxfrac': F, 'why': ..., 'shapes': [...]}"""
    binp, why = build.binary(task_dir, variant, src)
    if not binp:
        return {"status": "fail", "maxfrac": None, "why": why, "shapes": []}
    worst, fails, per = 0.0, [], []
    for shape in shapes:
        s = shape_str(task, shape)
        gd, why = gold.get(task_dir, s)
        if not gd:
            fails.append("%s: %s" % (s, why))
            continue
        lines = ["mode %s" % ("solution" if variant == "solution" else "baseline"),
                 "tolerance %r %r" % (float(task["tolerance"]["atol"]), float(task["tolerance"]["rtol"])),
                 "calls %d" % args.calls]
        ws = 64 << 20
        if "baseline_workspace" in task:
            ws += eval_expr(task["baseline_workspace"], shape)
        for p in task["params"]:
            lines.append("param %s %d" % (p, shape[p]))
        for sc in task.get("scalars", []):
            lines.append("scalar %s %r" % (sc["name"], float(sc["value"])))
        from_dtype = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int32": 4, "int64": 8, "bool": 1, "int8": 1,
                      "uint8": 1}
        for t in task["inputs"]:
            lines.append("input %s %s %s" % (t["name"], t["dtype"], os.path.join(gd, t["name"] + ".npy")))
            ws += 4 * eval_numel(t, shape) * from_dtype[t["dtype"]]
        for t in task["outputs"]:
            lines.append("output %s %s %s" % (t["name"], t["dtype"], os.path.join(gd, t["name"] + ".npy")))
            ws += 4 * eval_numel(t, shape) * from_dtype[t["dtype"]]
        lines.append("workspace %d" % ws)
        man = os.path.join(gd, "manifest-%s" % variant)
        with open(man, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, KA_EMU_SEED=str(args.seed), KA_EMU_ORDER=args.order)
        t0 = time.time()
        try:
            p = subprocess.run([binp, man], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout,
                               env=env)
            out, rc = p.stdout.decode(errors="replace"), p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "RESULT timeout after %d s" % args.timeout, 124
        dt = time.time() - t0
        m = re.search(r"RESULT (\w+)(?: maxfrac=(\S+))?", out)
        status = m.group(1) if m else "crash"
        frac = float(m.group(2)) if m and m.group(2) else None
        per.append({"shape": s, "status": status, "maxfrac": frac, "seconds": round(dt, 2)})
        if args.verbose:
            print("--- %s %s %s\n%s" % (task["name"], variant, s, out), flush=True)
        if status != "pass" or rc != 0:
            detail = [l for l in out.splitlines() if l.startswith(("emu: error", "emu: crash", "ka_launch"))
                      or (l.startswith("output") and " 0 outside" not in l)]
            fails.append("%s: %s" % (s, " | ".join(detail[:4]) or out.strip()[-300:]))
        if frac is not None:
            worst = max(worst, frac)
    return {"status": "fail" if fails else "pass", "maxfrac": worst, "why": "; ".join(fails), "shapes": per}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bank", default=os.path.join(ROOT, "bank", "public"))
    ap.add_argument("--tasks", default="", help="task names or tiers, comma-separated (default: all)")
    ap.add_argument("--variants", default="eager,compiled,solution")
    ap.add_argument("--shapes", default="all", help="all, smallest, bench, check indices: comma-separated")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "cuda_emu"))
    ap.add_argument("--ka", default=os.path.join(ROOT, "build", "ka"))
    ap.add_argument("--seed", type=int, default=1, help="the scheduler's seed (KA_EMU_SEED)")
    ap.add_argument("--input-seed", type=int, default=1, help="the inputs' seed (ka gold --seed)")
    ap.add_argument("--order", default="scrambled", choices=["scrambled", "linear"], help="KA_EMU_ORDER")
    ap.add_argument("--source", default="", help="files run as baselines of the tasks, comma-separated")
    ap.add_argument("--calls", type=int, default=1, help="ka_launch calls per shape")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per shape")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--probe", action="store_true", help="only check that g++, CUDA's headers and ka are there")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            die("--variants: '%s' is not eager, compiled or solution" % v)
    sources = {}  # variant name -> file, for --source
    for f in [f for f in args.source.split(",") if f]:
        if not os.path.isfile(f):
            die("--source: no file %s" % f)
        sources[os.path.splitext(os.path.basename(f))[0]] = os.path.abspath(f)
    if sources:
        variants = list(sources)
    if not shutil.which("g++"):
        die("no g++")
    inc = cuda_include()
    if not inc:
        die("no CUDA headers (cuda_fp16.h, cublasLt.h): set CUDA_HOME")
    if not os.access(args.ka, os.X_OK):
        die("no %s: run make first" % args.ka)
    if args.probe:
        print("run.py: g++, CUDA's headers (%s) and %s are there" % (inc, args.ka))
        sys.exit(0)
    want = set(t for t in args.tasks.split(",") if t)
    tasks = []
    for tier in sorted(os.listdir(args.bank)):
        tdir = os.path.join(args.bank, tier)
        if not os.path.isdir(tdir):
            continue
        for name in sorted(os.listdir(tdir)):
            d = os.path.join(tdir, name)
            if os.path.isfile(os.path.join(d, "task.json")) and (not want or name in want or tier in want):
                tasks.append(d)
    if not tasks:
        die("no task matches --tasks %s" % args.tasks)
    t0 = time.time()
    build = Build(args.work, inc)
    gold = Gold(args.work, args.ka, args.input_seed)
    jobs = []
    for d in tasks:
        task = json.load(open(os.path.join(d, "task.json")))
        try:
            shapes = select_shapes(task, args.shapes)
        except ValueError:
            die("--shapes: '%s' is not a list of all, smallest, bench or indices" % args.shapes)
        for v in variants:
            src = sources.get(v) or os.path.join(d, VARIANTS[v])
            if os.path.isfile(src):
                jobs.append((d, task, v, src, shapes))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = {ex.submit(run_variant, build, gold, d, task, v, src, shapes, args): (d, v)
                for d, task, v, src, shapes in jobs}
        for f in concurrent.futures.as_completed(futs):
            d, v = futs[f]
            results.setdefault(d, {})[v] = f.result()
    nfail = 0
    cols = variants
    print("%-34s %s" % ("task", " ".join("%-16s" % c for c in cols)))
    for d in tasks:
        row = []
        for v in cols:
            r = results.get(d, {}).get(v)
            if not r:
                row.append("%-16s" % "-")
                continue
            nfail += r["status"] != "pass"
            frac = "" if r["maxfrac"] is None else " %.3g" % r["maxfrac"]
            row.append("%-16s" % ((r["status"] if r["status"] == "pass" else "FAIL") + frac))
        print("%-34s %s" % (os.path.relpath(d, args.bank), " ".join(row)))
    for d in tasks:
        for v in cols:
            r = results.get(d, {}).get(v)
            if r and r["status"] != "pass":
                print("FAIL %s %s: %s" % (os.path.relpath(d, args.bank), v, r["why"]))
    runs = sum(len(r) for r in results.values())
    print("%d runs, %d failed, %.0f s" % (runs, nfail, time.time() - t0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({os.path.relpath(d, args.bank): r for d, r in results.items()}, f, indent=1, sort_keys=True)
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
