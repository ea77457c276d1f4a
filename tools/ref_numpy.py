#!/usr/bin/env python3
"""tools/ref_numpy.py: cross-check a task's single-source reference (ref.c)
against an independent fp64 NumPy evaluation of the task's PyTorch expression.

For each check shape of the task (and extra small shapes given with --shape):
draw inputs with NumPy (default_rng(seed), the task's distributions, stored
in the task's dtype), run ref.c for every work item through a generated C
driver (gcc -DKA_GOLD: outputs are doubles), evaluate the task's "torch"
field in fp64 over the same inputs with a small NumPy stand-in for the torch
functions it uses, and compare:

    rel = max_i |ref_i - numpy_i| / max(|numpy_i|, 1e-2 * max_j |numpy_j|)

(elementwise relative error, with a floor: an output below 1% of the
tensor's largest magnitude is compared relative to that 1%. Without it a dot
product that cancels to nearly zero would fail on fp64 rounding alone: both
sides round in different orders, and cancellation magnifies that relative
to the small result; a real bug, such as fp32 arithmetic, gives errors of
1e-7 relative or more and still fails by far.) The task passes when
rel <= 1e-12 for every output and shape. Prints "PASS <task>" or
"FAIL <task>: why" (the e2e line format) and exits 0 if all passed, 1 if not.

It does not use the project's input generator (include/ka_gen.h) on purpose:
the point is an implementation independent of everything but ref.c.

Other modes, used by tests/e2e/starter_compile.sh (NumPy not needed):
  --emit-driver TASK   print the C gold driver for TASK to stdout
  --emit-cuda TASK     print a CUDA wrapper kernel calling ref() per thread
A driver run with no arguments is a smoke test: the task's first check shape
with all-zero inputs; it prints "ok N" (N outputs, all finite) or fails.

Usage: tools/ref_numpy.py [--include DIR] [--seed N] [--shape K=V,...] TASK_DIR...
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

TOL = 1e-12
FLOOR = 1e-2
CTYPE = {"fp32": "float", "fp16": "ka_half", "bf16": "ka_bf16", "fp64": "double",
         "int32": "int", "int64": "ka_i64", "bool": "ka_bool", "int8": "ka_i8", "uint8": "ka_u8"}


# ---- task.json helpers (no NumPy needed) ----------------------------------

def load_task(tdir):
    # A model wrote a task whose folder holds lineage.json (the frontier
    # track's proposals and variants): its ref.c is run only in ka-goldbox,
    # confined (docs/grader.md, "Gold that is not bank code"), never here.
    if os.path.exists(os.path.join(tdir, "lineage.json")):
        raise ValueError("a model wrote this task (lineage.json): its ref.c runs only "
                         "confined, in ka-goldbox")
    with open(os.path.join(tdir, "task.json")) as f:
        return json.load(f)


def eval_expr(text, env):
    """Evaluate a shape expression (integers, names, + - * / % ( ), min,
    max) with C semantics for / and % (truncation toward zero)."""
    toks = re.findall(r"\d+|[A-Za-z_]\w*|[-+*/%(),]", str(text))
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        pos[0] += 1
        return toks[pos[0] - 1]

    def expr():
        v = term()
        while peek() in ("+", "-"):
            v = v + term() if take() == "+" else v - term()
        return v

    def term():
        v = unary()
        while peek() in ("*", "/", "%"):
            op, r = take(), unary()
            if op == "*":
                v = v * r
            else:
                q = abs(v) // abs(r) * (1 if (v >= 0) == (r >= 0) else -1)
                v = q if op == "/" else v - q * r
        return v

    def unary():
        if peek() == "-":
            take()
            return -unary()
        t = take()
        if t == "(":
            v = expr()
            take()
            return v
        if t in ("min", "max"):
            take()
            a = expr()
            take()
            b = expr()
            take()
            return min(a, b) if t == "min" else max(a, b)
        return int(t) if t.isdigit() else env[t]

    v = expr()
    if pos[0] != len(toks):
        raise ValueError("bad expression %r" % text)
    return v


def shape_of(spec, env):
    return [eval_expr(d, env) for d in spec["shape"]]


def numel(spec, env):
    return math.prod(shape_of(spec, env))


def item_count(task, env):
    return math.prod(eval_expr(d, env) for d in task["items"])


# ---- generated C sources ----------------------------------------------------

def c_include_path(path):
    """path for an #include "..." line. The preprocessor reads no escapes
    there, so a path holding a quote, a backslash or a control character
    cannot be named safely: refused (ValueError) rather than let it end the
    directive."""
    for ch in path:
        if ch in '"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise ValueError("path %r cannot be #included (quote, backslash or control character)" % path)
    return path


def emit_driver(tdir, task):
    """C program: ref for every item, inputs from raw files, outputs as raw
    doubles. argv: params..., items, then one file per input, one per output.
    No arguments: smoke run on the first check shape with zero inputs."""
    params, ins, outs = task["params"], task["inputs"], task["outputs"]
    env = dict(task["checks"][0])
    ref = os.path.abspath(os.path.join(tdir, "ref.c"))
    nargs = len(params) + 1 + len(ins) + len(outs)
    L = []
    w = L.append
    w("/* generated by tools/ref_numpy.py for %s */" % task["name"])
    w("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>")
    w('#include "%s"' % c_include_path(ref))
    w("static void *load(const char *path, size_t bytes)\n{")
    w("\tvoid *p = calloc(1, bytes ? bytes : 1);")
    w("\tif (!p) exit(3);")
    w("\tif (path) {")
    w("\t\tFILE *f = fopen(path, \"rb\");")
    w("\t\tif (!f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, \"cannot read %s\\n\", path); exit(3); }")
    w("\t\tfclose(f);\n\t}\n\treturn p;\n}")
    w("#define min(a, b) ((a) < (b) ? (a) : (b))\n#define max(a, b) ((a) > (b) ? (a) : (b))")
    w("int main(int argc, char **argv)\n{")
    w("\tint smoke = argc == 1;")
    w("\tif (!smoke && argc != %d) { fprintf(stderr, \"usage: %s\\n\"); return 2; }"
      % (nargs + 1, " ".join(params + ["items"] + [s["name"] for s in ins + outs])))
    for i, p in enumerate(params):
        w("\tka_i64 %s = smoke ? %dLL : atoll(argv[%d]);" % (p, env[p], i + 1))
    w("\tka_i64 items = smoke ? %dLL : atoll(argv[%d]);" % (item_count(task, env), len(params) + 1))
    # numel of each tensor: evaluated here from the shape expressions with C
    # arithmetic (the same grammar as the task format).
    for k, s in enumerate(ins + outs):
        dims = " * ".join("(ka_i64)(%s)" % d for d in s["shape"]) or "1"
        w("\tka_i64 n_%s = %s;" % (s["name"], dims))
    for k, s in enumerate(ins):
        w("\t%s *%s = load(smoke ? NULL : argv[%d], (size_t)n_%s * sizeof(%s));"
          % (CTYPE[s["dtype"]], s["name"], len(params) + 2 + k, s["name"], CTYPE[s["dtype"]]))
    for s in outs:
        w("\tdouble *%s = load(NULL, (size_t)n_%s * sizeof(double));" % (s["name"], s["name"]))
        w("\tfor (ka_i64 i = 0; i < n_%s; i++) %s[i] = NAN;" % (s["name"], s["name"]))
    scal = ["(%s)" % float(x["value"]).hex() for x in task.get("scalars", [])]
    args = ", ".join(["item"] + params + scal + [s["name"] for s in ins + outs])
    w("\tfor (ka_i64 item = 0; item < items; item++)\n\t\tref(%s);" % args)
    w("\tif (smoke) {\n\t\tka_i64 n = 0;")
    for s in outs:
        w("\t\tfor (ka_i64 i = 0; i < n_%s; i++, n++)" % s["name"])
        w("\t\t\tif (!(%s[i] - %s[i] == 0.0)) { fprintf(stderr, \"%s[%%lld] not finite\\n\", (long long)i); return 1; }"
          % (s["name"], s["name"], s["name"]))
    w("\t\tprintf(\"ok %lld\\n\", (long long)n);\n\t\treturn 0;\n\t}")
    for k, s in enumerate(outs):
        w("\t{\n\t\tFILE *f = fopen(argv[%d], \"wb\");" % (len(params) + 2 + len(ins) + k))
        w("\t\tif (!f || fwrite(%s, sizeof(double), (size_t)n_%s, f) != (size_t)n_%s) return 3;"
          % (s["name"], s["name"], s["name"]))
        w("\t\tfclose(f);\n\t}")
    w("\treturn 0;\n}")
    return "\n".join(L) + "\n"


def emit_cuda(tdir, task):
    """CUDA wrapper: one thread per work item calling ref (device code)."""
    ref = os.path.abspath(os.path.join(tdir, "ref.c"))
    ins, outs = task["inputs"], task["outputs"]
    plist = ["ka_i64 items"] + ["ka_i64 %s" % p for p in task["params"]]
    plist += ["const %s *__restrict__ %s" % (CTYPE[s["dtype"]], s["name"]) for s in ins]
    plist += ["%s *__restrict__ %s" % (CTYPE[s["dtype"]], s["name"]) for s in outs]
    scal = ["(%s)" % float(x["value"]).hex() for x in task.get("scalars", [])]
    args = ", ".join(["item"] + task["params"] + scal + [s["name"] for s in ins + outs])
    return ("/* generated by tools/ref_numpy.py for %s */\n#include <stdint.h>\n#include \"%s\"\n"
            "__global__ void ref_kernel(%s)\n{\n"
            "\tka_i64 item = (ka_i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "\tif (item < items)\n\t\tref(%s);\n}\n" % (task["name"], c_include_path(ref), ", ".join(plist), args))


# ---- the NumPy side ----------------------------------------------------------

def torch_shim(np):
    """The torch functions a task's expression may use, in fp64 NumPy."""
    erf = np.frompyfunc(math.erf, 1, 1)

    def gelu(x, approximate="none"):
        x = np.asarray(x, dtype=np.float64)
        if approximate == "tanh":
            return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)).astype(np.float64))

    def softmax(x, dim=-1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    def layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
        axes = tuple(range(-len(shape), 0))
        mu = x.mean(axis=axes, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mu) / np.sqrt(var + eps)
        return y * (1 if weight is None else weight) + (0 if bias is None else bias)

    def softplus(x, beta=1.0, threshold=20.0):  # torch: linear where beta*x > threshold
        x = np.asarray(x, dtype=np.float64)
        return np.where(beta * x > threshold, x, np.log1p(np.exp(np.minimum(beta * x, threshold))) / beta)

    def reduce_fn(f):  # torch.sum(x, dim=..., keepdim=...) on NumPy
        return lambda x, dim=None, keepdim=False, **kw: f(np.asarray(x), axis=dim, keepdims=keepdim, **kw)

    class F:
        pass

    F.gelu = staticmethod(gelu)
    F.softmax = staticmethod(softmax)
    F.relu = staticmethod(lambda x: np.maximum(x, 0.0))
    F.silu = staticmethod(lambda x: x / (1.0 + np.exp(-x)))
    F.layer_norm = staticmethod(layer_norm)
    F.softplus = staticmethod(softplus)
    F.mish = staticmethod(lambda x: x * np.tanh(softplus(x)))
    F.hardswish = staticmethod(lambda x: x * np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0)
    F.linear = staticmethod(lambda x, w, b=None: x @ w.T + (0 if b is None else b))

    class NN:
        functional = F

    class Linalg:
        vector_norm = staticmethod(lambda x, ord=2, dim=None, keepdim=False:
                                   np.sqrt((np.asarray(x) ** 2).sum(axis=dim, keepdims=keepdim)))

    class Torch:
        nn = NN
        linalg = Linalg
        # dtypes are names only: a cast keeps the exact value (gold is fp64
        # and the task's tolerance covers the output's rounding).
        float32, float16, bfloat16, float64, int32, int64 = ("fp32", "fp16", "bf16", "fp64", "int32", "int64")

    for name in ("exp", "tanh", "sqrt", "abs", "maximum", "minimum", "matmul"):
        setattr(Torch, name, staticmethod(getattr(np, name)))
    Torch.erf = staticmethod(lambda x: erf(x).astype(np.float64))
    Torch.softmax = staticmethod(softmax)
    Torch.sigmoid = staticmethod(lambda x: 1.0 / (1.0 + np.exp(-x)))
    Torch.relu = F.relu
    Torch.clamp = staticmethod(lambda x, min=None, max=None: np.clip(x, min, max))
    Torch.sum = staticmethod(reduce_fn(np.sum))
    Torch.mean = staticmethod(reduce_fn(np.mean))
    Torch.amax = staticmethod(reduce_fn(np.max))
    Torch.amin = staticmethod(reduce_fn(np.min))
    Torch.var = staticmethod(lambda x, dim=None, keepdim=False, correction=1:
                             np.var(np.asarray(x), axis=dim, keepdims=keepdim, ddof=correction))
    Torch.argmax = staticmethod(lambda x, dim=None, keepdim=False:
                                np.argmax(np.asarray(x), axis=dim, keepdims=keepdim).astype(np.float64))
    Torch.cumsum = staticmethod(lambda x, dim: np.cumsum(np.asarray(x), axis=dim))
    l2_extend_shim(np, Torch, F)
    return Torch, F


def tensor_class(np):
    """An ndarray with the tensor methods task expressions use (x.to(dtype),
    x.float(), x.half()): casts keep the exact value, as gold does."""
    class T(np.ndarray):
        def to(self, dtype):
            return self

        def float(self):
            return self

        def masked_fill(self, mask, value):
            return np.where(np.asarray(mask, dtype=bool), value, np.asarray(self))

        half = bfloat16 = float
    return T


def dist_bound(d, key, env):
    """An int distribution's bound: a number, or an expression over the
    parameters ("V - 1") evaluated at the shape env."""
    v = d[key]
    return eval_expr(v, env) if isinstance(v, str) else v


def draw(np, rng, spec, n, env):
    """(raw array to write for ref.c, its values as float64)."""
    d = spec["dist"]
    dt = {"fp32": np.float32, "fp64": np.float64, "int32": np.int32, "int64": np.int64,
          "bool": np.uint8, "int8": np.int8, "uint8": np.uint8}
    if d["kind"] == "normal":
        v = rng.normal(d["mean"], d["std"], n)
    elif d["kind"] == "uniform":
        v = rng.uniform(d["lo"], d["hi"], n)
    else:
        v = rng.integers(dist_bound(d, "lo", env), dist_bound(d, "hi", env) + 1, n)
    if spec["dtype"] == "fp16":
        raw = v.astype(np.float16)
        return raw.view(np.uint16), raw.astype(np.float64)
    if spec["dtype"] == "bf16":  # fp32, then round to nearest even on the top 16 bits
        u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if spec["dtype"] not in dt:
        raise ValueError("dtype %s not supported by this cross-check" % spec["dtype"])
    raw = v.astype(dt[spec["dtype"]])
    return raw, raw.astype(np.float64)


def check_task(np, tdir, include, seed, extra_shapes, work):
    task = load_task(tdir)
    name = task["name"]
    exe = os.path.join(work, name + "_gold")
    src = exe + ".c"
    try:
        driver = emit_driver(tdir, task)
    except ValueError as err:
        return str(err)
    with open(src, "w") as f:
        f.write(driver)
    cc = subprocess.run(["gcc", "-std=c17", "-O2", "-ffp-contract=off", "-DKA_GOLD", "-I" + include,
                         "-o", exe, src, "-lm"], capture_output=True, text=True)
    if cc.returncode != 0:
        return "ref.c does not compile as C: " + cc.stderr.strip().splitlines()[0]
    torch, F = torch_shim(np)
    shapes = list(task["checks"]) + extra_shapes
    worst = 0.0
    for si, env in enumerate(shapes):
        rng = np.random.default_rng(seed + si)
        argv = [exe] + [str(env[p]) for p in task["params"]] + [str(item_count(task, env))]
        scope = {p: env[p] for p in task["params"]}  # parameters by name, as tools/calibrate.py
        scope.update({x["name"]: float(x["value"]) for x in task.get("scalars", [])})
        for s in task["inputs"]:
            raw, val = draw(np, rng, s, numel(s, env), env)
            path = os.path.join(work, "%s_%s.bin" % (name, s["name"]))
            raw.tofile(path)
            argv.append(path)
            if s["dtype"] == "bool":  # a mask: NumPy bool, so where/masked_fill select
                val = val != 0
            scope[s["name"]] = val.reshape(shape_of(s, env)).view(tensor_class(np))
        outs = []
        for s in task["outputs"]:
            path = os.path.join(work, "%s_%s.out" % (name, s["name"]))
            argv.append(path)
            outs.append((s, path))
        run = subprocess.run(argv, capture_output=True, text=True)
        if run.returncode != 0:
            return "driver failed at %s: %s" % (env, run.stderr.strip())
        want = eval(task["torch"], {"torch": torch, "F": F, "__builtins__": {}}, scope)
        if len(outs) == 1:
            want = (want,)
        for (s, path), w in zip(outs, want):
            got = np.fromfile(path, dtype=np.float64).reshape(shape_of(s, env))
            w = np.asarray(w, dtype=np.float64)
            if got.shape != w.shape:
                return "%s: shape %s, NumPy gives %s" % (s["name"], got.shape, w.shape)
            if not np.all(np.isfinite(got)):
                return "%s at %s: non-finite reference output" % (s["name"], env)
            scale = float(np.abs(w).max()) if w.size else 0.0
            den = np.maximum(np.abs(w), FLOOR * scale)
            den[den == 0] = 1.0
            rel = float((np.abs(got - w) / den).max()) if w.size else 0.0
            worst = max(worst, rel)
            if not rel <= TOL:
                return "%s at %s: relative error %.3e > %.0e" % (s["name"], env, rel, TOL)
    return "ok: %d shapes, max relative error %.2e" % (len(shapes), worst)


# ---- torch functions of the L2 tasks ----

def l2_extend_shim(np, Torch, F):
    def normalize(x, p=2.0, dim=-1, eps=1e-12):
        n = np.sqrt((np.abs(x) ** p).sum(axis=dim, keepdims=True)) if p == 2.0 else \
            ((np.abs(x) ** p).sum(axis=dim, keepdims=True)) ** (1.0 / p)
        return x / np.maximum(n, eps)

    Torch.bmm = staticmethod(np.matmul)

    def logsumexp(x, dim, keepdim=False):
        m = np.max(x, axis=dim, keepdims=True)
        r = m + np.log(np.exp(x - m).sum(axis=dim, keepdims=True))
        return r if keepdim else np.squeeze(r, axis=dim)

    def group_norm(x, G, weight=None, bias=None, eps=1e-5):
        sh = x.shape
        g = np.asarray(x).reshape(sh[0], G, -1)
        mu = g.mean(axis=-1, keepdims=True)
        var = ((g - mu) ** 2).mean(axis=-1, keepdims=True)
        y = ((g - mu) / np.sqrt(var + eps)).reshape(sh)
        cs = (1, sh[1]) + (1,) * (len(sh) - 2)
        return y * (1 if weight is None else np.reshape(weight, cs)) + (0 if bias is None else np.reshape(bias, cs))

    Torch.logsumexp = staticmethod(logsumexp)
    Torch.round = staticmethod(np.round)  # half to even, as torch.round
    Torch.where = staticmethod(np.where)
    Torch.int8, Torch.uint8 = "int8", "uint8"
    Torch.bool = "bool"
    F.group_norm = staticmethod(group_norm)
    F.one_hot = staticmethod(lambda x, n: np.eye(n)[np.asarray(x, dtype=np.int64)])
    F.normalize = staticmethod(normalize)

# ---- L3 bank tasks (bank/public/L3): fp16/bf16 inputs and the torch functions
# of attention and normalisation. A separate block: it wraps torch_shim()
# above instead of editing it (draw() already handles fp16/bf16). -----------------------------------

_torch_shim_base = torch_shim


def torch_shim(np):
    Torch, F = _torch_shim_base(np)

    def sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
        if enable_gqa and k.shape[-3] != q.shape[-3]:
            g = q.shape[-3] // k.shape[-3]
            k = np.repeat(k, g, axis=-3)
            v = np.repeat(v, g, axis=-3)
        sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
        s = (q @ np.swapaxes(k, -1, -2)) * sc
        L, S = q.shape[-2], k.shape[-2]
        keep = np.ones((L, S), dtype=bool)
        if is_causal:
            keep = np.tril(keep)
        if attn_mask is not None:
            keep = keep & np.asarray(attn_mask, dtype=bool)
        s = np.where(keep, s, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v

    def rms_norm(x, shape, weight=None, eps=1e-6):
        axes = tuple(range(-len(shape), 0))
        y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
        return y * (1 if weight is None else weight)

    def group_norm(x, groups, weight=None, bias=None, eps=1e-5):
        n, c = x.shape[0], x.shape[1]
        g = x.reshape(n, groups, -1)
        mu = g.mean(axis=-1, keepdims=True)
        var = ((g - mu) ** 2).mean(axis=-1, keepdims=True)
        y = ((g - mu) / np.sqrt(var + eps)).reshape(x.shape)
        bshape = (1, c) + (1,) * (x.ndim - 2)
        if weight is not None:
            y = y * np.reshape(weight, bshape)
        if bias is not None:
            y = y + np.reshape(bias, bshape)
        return y

    def log_softmax(x, dim=-1):
        m = x.max(axis=dim, keepdims=True)
        return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))

    def cross_entropy(x, t, reduction="mean"):
        lp = log_softmax(x, -1)
        loss = -np.take_along_axis(lp, np.asarray(t, dtype=np.int64)[:, None], axis=1)[:, 0]
        return loss if reduction == "none" else (loss.sum() if reduction == "sum" else loss.mean())

    def ones(*shape, dtype=None, device=None):
        return np.ones(shape, dtype=bool if dtype is bool else np.float64)

    F.scaled_dot_product_attention = staticmethod(sdpa)
    F.rms_norm = staticmethod(rms_norm)
    F.group_norm = staticmethod(group_norm)
    F.log_softmax = staticmethod(log_softmax)
    F.cross_entropy = staticmethod(cross_entropy)
    Torch.log_softmax = staticmethod(log_softmax)
    Torch.cat = staticmethod(lambda ts, dim=0: np.concatenate(ts, axis=dim))
    Torch.ones = staticmethod(ones)
    Torch.tril = staticmethod(lambda m, diagonal=0: np.tril(m, diagonal))
    Torch.triu = staticmethod(lambda m, diagonal=0: np.triu(m, diagonal))
    Torch.bool = bool
    Torch.rsqrt = staticmethod(lambda x: 1.0 / np.sqrt(x))
    return Torch, F


# ---- L1 index and layout tasks: gathers, scatters, top-k, one-hot, views.
# Wraps torch_shim() and tensor_class() above, as the L3 block does. ------

_torch_shim_l3 = torch_shim
_tensor_class_base = tensor_class


def torch_shim(np):
    Torch, F = _torch_shim_l3(np)

    def topk(x, k, dim=-1, largest=True, sorted=True):
        """(values, indices) along dim, largest first; equal values in index
        order (a stable sort), the rule the bank's top-k task states."""
        x = np.asarray(x)
        order = np.argsort(-x if largest else x, axis=dim, kind="stable")
        idx = np.take(order, np.arange(k), axis=dim)
        return np.take_along_axis(x, idx, axis=dim), idx.astype(np.float64)

    F.embedding = staticmethod(lambda idx, w: np.asarray(w)[np.asarray(idx, dtype=np.int64)])
    # cat keeps the tensor class of its inputs, so that methods chain on it
    Torch.cat = staticmethod(lambda ts, dim=0: np.concatenate(ts, axis=dim).view(type(ts[0])))
    Torch.topk = staticmethod(topk)
    return Torch, F


def tensor_class(np):
    """Adds the view and in-place index methods: x.t(), x.permute(...),
    x.contiguous(), x.new_zeros(...), y.index_add_(0, idx, src)."""
    Base = _tensor_class_base(np)

    class T(Base):
        def t(self):
            return np.asarray(self).T.view(T)

        def permute(self, *dims):
            return np.transpose(np.asarray(self), dims).view(T)

        def contiguous(self):
            return self

        def new_zeros(self, *shape):
            return np.zeros(shape).view(T)

        def index_add_(self, dim, idx, src):
            a = np.moveaxis(np.asarray(self), dim, 0)  # a view: adds land in self
            np.add.at(a, np.asarray(idx, dtype=np.int64), np.moveaxis(np.asarray(src), dim, 0))
            return self
    return T


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks", nargs="*", metavar="TASK_DIR")
    ap.add_argument("--include", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", action="append", default=[], help="extra shape K=V,... (all tasks)")
    ap.add_argument("--emit-driver", metavar="TASK_DIR")
    ap.add_argument("--emit-cuda", metavar="TASK_DIR")
    a = ap.parse_args()
    if a.emit_driver:
        sys.stdout.write(emit_driver(a.emit_driver, load_task(a.emit_driver)))
        return 0
    if a.emit_cuda:
        sys.stdout.write(emit_cuda(a.emit_cuda, load_task(a.emit_cuda)))
        return 0
    if not a.tasks:
        ap.error("no task folder given")
    import numpy as np
    extra = [dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in s.split(",")) for s in a.shape]
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for t in a.tasks:
            label = os.path.basename(os.path.normpath(t))
            try:
                msg = check_task(np, t, a.include, a.seed, extra, work)
            except Exception as e:  # a broken task is a FAIL line, not a traceback
                msg = "%s: %s" % (type(e).__name__, e)
            if msg.startswith("ok"):
                print("PASS ref_numpy %s (%s)" % (label, msg[4:]))
            else:
                ok = False
                print("FAIL ref_numpy %s: %s" % (label, msg))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
