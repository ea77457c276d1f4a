#!/usr/bin/env python3
"""Time the attention tasks' PyTorch expression in three forms (issue 15).

For each attention task of bank/public/L3 this times, eager and under
torch.compile, with calibrate.py's protocol (cold L2, CUDA events, median):

  sdpa       the task's "torch" field (F.scaled_dot_product_attention: PyTorch
             picks a fused flash kernel);
  math16     the expression written out op by op as PyTorch eager runs it
             (matmul, scale, mask, softmax, matmul), scores stored in the
             input dtype;
  math32     the same with the scores in fp32 (torch.bmm(..., out_dtype=
             torch.float32)), the softmax reading fp32 and its result cast
             to the input dtype: the form of the tasks' baseline_torch,
             which the bank's eager.cu and compiled.cu mirror and
             tools/calibrate.py now times (with the statement, sdpa, beside
             it); this probe stays for the math16 comparison. Its figures
             of 2026-12-01: bank/calibration/NVIDIA_H200.attn_probe.json.

Usage: python3 tools/attn_calib_probe.py [--samples N] [--only a,b] [--out F]
Prints one line per task and form and writes the figures as JSON to --out.
Runs only where PyTorch sees a CUDA GPU.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibrate import draw, time_fn  # noqa: E402  the same protocol as the calibration
from ref_numpy import eval_expr  # noqa: E402


def attn_math(torch, q, k, v, causal, window, score_dtype):
    """softmax(q k^T / sqrt(d) + mask) v, one PyTorch op per step."""
    B, Hq, Sq, D = q.shape
    Hk, Sk = k.shape[1], k.shape[2]
    if Hk != Hq:  # grouped-query: each key head serves Hq / Hk query heads
        k = k.repeat_interleave(Hq // Hk, dim=1)
        v = v.repeat_interleave(Hq // Hk, dim=1)
    q3, k3, v3 = q.reshape(B * Hq, Sq, D), k.reshape(B * Hq, Sk, D), v.reshape(B * Hq, Sk, D)
    if score_dtype is None:
        s = torch.bmm(q3, k3.transpose(1, 2))
    else:
        s = torch.bmm(q3, k3.transpose(1, 2), out_dtype=score_dtype)
    s = s * (1.0 / math.sqrt(D))
    if causal or window:
        i = torch.arange(Sq, device=q.device).view(Sq, 1) + (Sk - Sq)
        j = torch.arange(Sk, device=q.device).view(1, Sk)
        keep = j <= i
        if window:
            keep = keep & (j > i - window)
        s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, dim=-1).to(q.dtype)
    return torch.bmm(p, v3).reshape(B, Hq, Sq, D)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--only", help="comma-separated task names")
    ap.add_argument("--out", help="JSON file for the figures")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("attn_calib_probe.py: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bank", "public", "L3")
    only = set(a.only.split(",")) if a.only else None
    res = {}
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name, "task.json")
        if not os.path.exists(p):
            continue
        task = json.load(open(p))
        expr = task["torch"]
        if "scaled_dot_product_attention" not in expr or (only and name not in only):
            continue
        if "cat(" in expr:  # rotary embedding: the attention part is the same as the others'
            continue
        env = dict(task["bench"])
        torch.manual_seed(0)
        q, k, v = [draw(torch, s, [eval_expr(d, env) for d in s["shape"]], env) for s in task["inputs"][:3]]
        causal = "is_causal=True" in expr
        window = 256 if "triu(" in expr else 0
        forms = {
            "sdpa": lambda q, k, v: F.scaled_dot_product_attention(
                q, k, v, is_causal=causal and not window, enable_gqa=k.shape[1] != q.shape[1],
                attn_mask=None if not window else torch.triu(torch.tril(torch.ones(
                    q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device)), -(window - 1))),
            "math16": lambda q, k, v: attn_math(torch, q, k, v, causal or bool(window), window, None),
            "math32": lambda q, k, v: attn_math(torch, q, k, v, causal or bool(window), window, torch.float32),
        }
        res[name] = {}
        for form, fn in forms.items():
            row = {}
            for mode in ("eager", "compiled"):
                try:
                    f = fn if mode == "eager" else torch.compile(fn, dynamic=False)
                    row[mode] = time_fn(torch, lambda: f(q, k, v), a.samples, flush)["median_us"]
                except Exception as e:  # one form's failure is reported, the rest still run
                    row[mode] = "%s: %s" % (type(e).__name__, str(e)[:200])
                torch._dynamo.reset()
            res[name][form] = row
            fmt = lambda x: "%.1f us" % x if isinstance(x, float) else x  # noqa: E731
            print("%-24s %-7s eager %s, compiled %s" % (name, form, fmt(row["eager"]), fmt(row["compiled"])), flush=True)
        if a.out:
            with open(a.out, "w") as f:
                json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
