#!/usr/bin/env python3
"""make_fixtures.py: regenerate the scorecard fixtures of tests/data/scorecards.

    python3 tests/data/scorecards/make_fixtures.py build-h7/ka

Writes good/*.json (capability scorecards for three models, one per RSI board;
the 12-round weight-RSI and the standardized ones in schema ka-scorecard/2 with
diagnostics, the recursion-interruption arm and the standardized bank) and
bad/*.json (one problem each). Data are synthetic but shaped like real
runs; sample scores and aggregates are filled in by `ka scorecard recompute`,
so they are what ka computes. Deterministic: same output every run."""
import json, math, os, random, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KA = sys.argv[1] if len(sys.argv) > 1 else "build/ka"

TASKS = [("scale_bias_gelu", "L1"), ("add_relu", "L1"), ("transpose_2d", "L1"),
         ("gemm_bias_gelu", "L2"), ("gemm_bias_relu", "L2"), ("gemm_scale_residual", "L2"),
         ("row_softmax", "L3"), ("layer_norm", "L3"), ("causal_attention", "L3")]
FAILS = ["compile_error", "wrong_answer", "runtime_fault", "timeout", "no_code",
         "forbidden", "unwritten_output", "nonfinite"]
DETAIL = {"compile_error": "kernel.cu(14): error: identifier \"blockDim_x\" is undefined",
          "wrong_answer": "shape M=128,N=1031: 2113 of 131968 elements differ; worst at [7,1030]: got 0.5, want 0.4123",
          "runtime_fault": "illegal memory access in kernel launch 2",
          "timeout": "call exceeded 10 s",
          "no_code": "reply had no ```cuda block",
          "forbidden": "calls cublasSgemm, not allowed for this task",
          "unwritten_output": "y[0..1031) of row 3 never written",
          "nonfinite": "output holds NaN at [0,5]"}

def base(track, model, bank_name="kernel_bank", split="heldout", n_tasks=9, k=5,
         seed=20260101, target="cuda"):
    return {
        "schema": "ka-scorecard/1", "track": track, "created": "2026-11-28T09:15:00Z",
        "ka_version": "0.1.0", "model": model,
        "bank": {"name": bank_name, "path": "bank/" + split, "hash": "9f2c4e1a7b3d5f60" * 2,
                 "split": split, "n_tasks": n_tasks},
        "k": k, "seed": seed, "target": target,
        "device": {"name": "NVIDIA H200", "driver": "570.86.15", "runtime": "CUDA 12.8",
                   "test_grade": False,
                   "clocks": {"sm_mhz_min": 1755, "sm_mhz_max": 1980, "mem_mhz": 3201},
                   "extra": {"sm_count": 132, "memory_gib": 139}},
        "protocol": {"min_samples": 10, "max_samples": 200, "max_seconds": 2.0,
                     "ci_target": 0.02, "flush_bytes": 268435456, "warmup": 3,
                     "check_shapes": "all", "bench_shape": "task"},
    }

def model(name, spec, backend, kind, family=None):
    m = {"spec": spec, "backend": backend, "name": name, "kind": kind}
    if family:
        m["family"] = family
    return m

def capability(rng, m, p_ok, speed_mu, split="heldout", k=5, sources=None):
    sc = base("capability", m, split=split, k=k)
    tasks = []
    for name, tier in TASKS:
        diff = {"L1": 1.0, "L2": 0.8, "L3": 0.6}[tier]
        samples = []
        for i in range(k):
            ok = rng.random() < p_ok * diff
            s = {"sample": i}
            if ok:
                med = math.exp(rng.gauss(speed_mu, 0.5))
                w = 0.02 + 0.03 * rng.random()
                comp = med / (1.1 + 0.5 * rng.random())
                t_us = 100.0 / med
                s.update(verdict="ok", detail="",
                         speedup_eager={"median": med, "lo": med * (1 - w), "hi": med * (1 + w)},
                         speedup_compiled={"median": comp, "lo": comp * (1 - w), "hi": comp * (1 + w)},
                         time_us={"median": t_us, "lo": t_us * (1 - w), "hi": t_us * (1 + w)})
            else:
                v = rng.choice(FAILS)
                s.update(verdict=v, detail=DETAIL[v], speedup_eager=None,
                         speedup_compiled=None, time_us=None)
            s["score"] = 0
            s["tokens"] = {"in": 1800 + rng.randrange(400), "out": 600 + rng.randrange(900)}
            s["cost_usd"] = round(s["tokens"]["in"] * 3e-6 + s["tokens"]["out"] * 15e-6, 6)
            s["latency_s"] = round(4 + 20 * rng.random(), 3)
            # Sources exist for sample 0 of the first three tasks; the fourth
            # names one that is missing (the board says so).
            if sources is not None and i == 0 and len(tasks) < 4:
                s["source_path"] = "src/%s.s%d.cu" % (name, i)
            samples.append(s)
        tasks.append({"name": name, "tier": tier, "samples": samples})
    sc["tasks"] = tasks
    sc["aggregates"] = {}
    return sc

def fig(v, w=0.03, lo_lim=0.0, hi_lim=1.0):
    return {"value": v, "lo": max(lo_lim, v - w), "hi": min(hi_lim, v + w)}

def verdict(diff, beats):
    if diff["hi"] < 0:
        return "negative"
    if diff["lo"] > 0 and beats:
        return "positive"
    return "no signal"

def dfig(a, b, w):
    v = a - b
    return {"value": v, "lo": max(-1.0, v - w), "hi": min(1.0, v + w)}

def weight_rsi(rng, m, rounds, c0, gains, fresh_gain, r0_gain, div_decay, ret_decay,
               bank_tier=None, anchor=None, v2=False, interrupt=None):
    """v2: schema ka-scorecard/2 (rows' compression; with interrupt, the
    ckpt_frozen arm after that round; with bank_tier, summary.standardized).
    The /2 parts draw nothing from rng, so the /1 fixtures stay as they were."""
    sc = base("weight_rsi", m, bank_name="rsi_bank_hard", n_tasks=60, k=3)
    if v2:
        sc["schema"] = "ka-scorecard/2"
    rows = []
    c = {"self": c0, "fresh_frozen": c0, "round0": c0}
    for r in range(rounds + 1):
        if r > 0:
            c["self"] = min(0.95, max(0.05, c["self"] + gains(r) + rng.gauss(0, 0.004)))
            c["fresh_frozen"] = min(0.95, c["fresh_frozen"] + fresh_gain / r)
            c["round0"] = min(0.95, c["round0"] + r0_gain / r)
        if interrupt and r == interrupt:
            c["ckpt_frozen"] = c["self"]
        if interrupt and r > interrupt:
            c["ckpt_frozen"] = min(0.95, c["ckpt_frozen"] + 0.004 / (r - interrupt))
        arms = ["self"] if r == 0 else ["self", "fresh_frozen", "round0"]
        if interrupt and r > interrupt:
            arms.append("ckpt_frozen")
        for arm in arms:
            row = {"round": r, "arm": arm, "c": fig(c[arm], 0.035),
                   "correct": fig(min(1.0, c[arm] * 1.35), 0.04),
                   "compiled_x": fig(0.7 + c[arm], 0.08, 1e-3, 1e3)}
            if arm == "self":
                row["diversity"] = round(max(0.05, 0.9 * math.exp(-div_decay * r)), 4)
                row["retention"] = round(max(0.05, 1.0 - ret_decay * r), 4)
                if v2:
                    row["compression"] = round(0.12 + 0.3 * row["diversity"], 4)
            rows.append(row)
    last = {row["arm"]: row for row in rows if row["round"] == rounds}
    first = rows[0]
    smf = dfig(last["self"]["c"]["value"], last["fresh_frozen"]["c"]["value"], 0.025)
    smr = dfig(last["self"]["c"]["value"], last["round0"]["c"]["value"], 0.025)
    summ = {"rounds": rounds, "c0": first["c"], "c_final": last["self"]["c"],
            "correct": last["self"]["correct"], "compiled_x": last["self"]["compiled_x"],
            "delta_vs_frozen": dfig(last["self"]["c"]["value"], first["c"]["value"], 0.03),
            "self_minus_fresh": smf, "self_minus_round0": smr,
            "verdict": verdict(smf, smr["value"] > 0)}
    if bank_tier:
        summ["bank_tier"] = bank_tier
        summ["baseline"] = "compiled"
        summ["anchor"] = anchor
    if v2 and interrupt:
        summ["interrupt_after"] = interrupt
        summ["self_minus_ckpt"] = dfig(last["self"]["c"]["value"],
                                       last["ckpt_frozen"]["c"]["value"], 0.02)
    if v2 and bank_tier:
        band = {"small": 0.75, "mid": 0.625, "large": 0.5}[bank_tier]
        summ["standardized"] = {"format": "ka-std-bank/1", "scale": bank_tier, "anchor": anchor,
                                "k": 8, "band": [0.125, band], "n_tasks": 60,
                                "n_source_tasks": 142, "baseline": "compiled",
                                "pass_rate": round(band / 2 + 0.05, 4), "c": round(c0 + 0.05, 4),
                                "compiled_x": round(0.8 + c0, 4)}
    sc["rounds"] = rows
    sc["summary"] = summ
    return sc

def write(path, sc, recompute=True):
    full = os.path.join(HERE, path)
    if not recompute:
        with open(full, "w") as f:
            json.dump(sc, f, indent=1)
            f.write("\n")
        return
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(sc, f)
        tmp = f.name
    r = subprocess.run([KA, "scorecard", "recompute", tmp, "-o", full], capture_output=True, text=True)
    os.unlink(tmp)
    if r.returncode:
        sys.exit("recompute failed for %s: %s%s" % (path, r.stdout, r.stderr))

def main():
    rng = random.Random(7)
    fable = model("Fable-5.1", "anthropic:fable-5.1", "anthropic", "closed")
    qwen7 = model("Qwen2.5-Coder-7B", "openai:Qwen/Qwen2.5-Coder-7B-Instruct@http://127.0.0.1:8000/v1",
                  "openai", "open", "Qwen2.5")
    llama = model("Llama-3.1-8B", "openai:meta-llama/Llama-3.1-8B-Instruct@http://127.0.0.1:8000/v1",
                  "openai", "open", "Llama-3.1")
    dsc = model("DeepSeek-Coder-V2-Lite", "openai:deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct@http://127.0.0.1:8000/v1",
                "openai", "open", "DeepSeek-V2")
    hostile = model("<script>alert(1)</script>", "cmd:./x.sh \"<b>&amp;\"", "cmd", "open",
                    "<img src=x onerror=alert(2)>")

    write("good/cap_fable.json", capability(rng, fable, 0.85, 0.55, sources=True))
    write("good/cap_qwen7b.json", capability(rng, qwen7, 0.6, 0.1, split="public"))
    h = capability(rng, hostile, 0.4, -0.2)
    h["tasks"][0]["samples"][0].update(verdict="wrong_answer", detail="</td><script>alert(3)</script>",
                                       speedup_eager=None, speedup_compiled=None, time_us=None)
    h["tasks"][0]["samples"][0].pop("source_path", None)
    write("good/cap_hostile.json", h)

    write("good/wrsi_qwen7b.json", weight_rsi(rng, qwen7, 5, 0.42, lambda r: 0.03 / r ** 0.3, 0.02, 0.015, 0.03, 0.02))
    write("good/wrsi_llama8b.json", weight_rsi(rng, llama, 12, 0.38, lambda r: 0.02 - 0.006 * r, 0.012, 0.006, 0.18, 0.07,
                                               v2=True, interrupt=4))
    write("good/wrsi_deepseek.json", weight_rsi(rng, dsc, 12, 0.35, lambda r: 0.012 / r, 0.012, 0.01, 0.05, 0.03,
                                                v2=True, interrupt=4))
    for tier, name, anchor, c0, g in [("small", "Qwen2.5-Coder-1.5B", "Qwen2.5-Coder-1.5B (frozen)", 0.22, 0.012),
                                      ("mid", "Qwen2.5-Coder-7B", "Qwen2.5-Coder-7B (frozen)", 0.31, 0.02),
                                      ("large", "Qwen2.5-Coder-14B", "Qwen2.5-Coder-14B (frozen)", 0.36, 0.004)]:
        m = model(name, "openai:Qwen/%s-Instruct@http://127.0.0.1:8000/v1" % name, "openai", "open", "Qwen2.5")
        write("good/std_%s.json" % tier, weight_rsi(rng, m, 5, c0, lambda r, g=g: g, 0.008, 0.006, 0.02, 0.02, tier, anchor,
                                                    v2=True))

    # Harness RSI: the closed researcher edits the harness that trains the open trainee.
    sc = base("harness_rsi", fable, bank_name="rsi_bank_hard", n_tasks=60, k=3)
    sc["trainee"] = model("Qwen2.5-Coder-1.5B", "openai:Qwen/Qwen2.5-Coder-1.5B-Instruct@http://127.0.0.1:8000/v1",
                          "openai", "open", "Qwen2.5")
    rows, ci, cf = [], 0.24, 0.24
    for r in range(6):
        if r:
            ci += 0.018
            cf += 0.006
        rows.append({"round": r, "arm": "improved", "c": fig(ci, 0.03), "harness_lines_changed": 40 * r})
        rows.append({"round": r, "arm": "frozen", "c": fig(cf, 0.03)})
    ivf = dfig(rows[-2]["c"]["value"], rows[-1]["c"]["value"], 0.025)
    sc["rounds"] = rows
    sc["summary"] = {"rounds": 5, "c0": rows[0]["c"], "c_improved": rows[-2]["c"], "c_frozen": rows[-1]["c"],
                     "improved_vs_frozen": ivf, "verdict": verdict(ivf, rows[-2]["c"]["value"] > rows[0]["c"]["value"])}
    write("good/harness_fable.json", sc)

    # Non-recursive controls at equal generation budget.
    sc = base("controls", qwen7, bank_name="rsi_bank_hard", n_tasks=60, k=3)
    w, b, s, t = fig(0.51, 0.03), fig(0.47, 0.03), fig(0.45, 0.03), fig(0.48, 0.03)
    sc["summary"] = {"budget": 15, "weight_rsi_c": w, "best_of_k": b, "self_refine": s, "retrieval": t,
                     "recursion_gain": dfig(0.51, max(0.47, 0.45, 0.48), 0.035)}
    write("good/controls_qwen7b.json", sc)

    # Procedure RSI, a closed and an open model.
    for fname, m, q0, gain, fgain in [("proc_fable.json", fable, 0.55, 0.025, 0.004),
                                      ("proc_qwen7b.json", qwen7, 0.40, 0.006, 0.005)]:
        sc = base("procedure_rsi", m, k=3)
        rows, qs, qf = [], q0, q0
        for r in range(6):
            if r:
                qs += gain
                qf += fgain
            rows.append({"round": r, "arm": "self", "q": fig(qs, 0.03), "strategies": 3 + 2 * r})
            rows.append({"round": r, "arm": "frozen", "q": fig(qf, 0.03)})
        g = dfig(rows[-2]["q"]["value"], rows[-1]["q"]["value"], 0.02)
        sc["rounds"] = rows
        sc["summary"] = {"mode": "self_modify", "rounds": 5, "q0": rows[0]["q"], "q_final": rows[-2]["q"],
                         "q_gain_vs_frozen": g, "verdict": verdict(g, rows[-2]["q"]["value"] > rows[0]["q"]["value"])}
        write("good/" + fname, sc)

    # Frontier: a proposer keeps making the solved tasks harder.
    sc = base("frontier", qwen7, bank_name="frontier_seed", n_tasks=9, k=3)
    sc["proposer"] = fable
    rows, c, size = [], 0.44, 9
    for r in range(6):
        if r:
            c += 0.004 - 0.002 * (r % 2)
            size += 6 + r
        rows.append({"round": r, "arm": "self", "c": fig(c, 0.03), "frontier_size": size})
    ch = dfig(rows[-1]["c"]["value"], rows[0]["c"]["value"], 0.03)
    sc["rounds"] = rows
    sc["summary"] = {"rounds": 5, "c0": rows[0]["c"], "c_final": rows[-1]["c"], "c_change": ch,
                     "frontier_size0": 9, "frontier_final": size, "verdict": verdict(ch, True)}
    write("good/frontier_qwen7b.json", sc)

    # Kernel sources referenced by cap_fable.json's source_path fields.
    os.makedirs(os.path.join(HERE, "good/src"), exist_ok=True)
    for name, tier in TASKS[:3]:
        with open(os.path.join(HERE, "good/src/%s.s0.cu" % name), "w") as f:
            f.write("// %s, sample 0 (fixture)\n#include \"ka_kernel.h\"\n\n"
                    "__global__ void k(const float *x, float *y, int n)\n{\n"
                    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "\tif (i < n && x[i] < 1e30f) /* <escaped> & \"quoted\" */\n\t\ty[i] = x[i];\n}\n" % name)

    # Bad ones: each breaks one rule of a good one.
    good = json.load(open(os.path.join(HERE, "good/cap_qwen7b.json")))
    def bad(name, mutate):
        sc = json.loads(json.dumps(good))
        mutate(sc)
        write("bad/" + name, sc, recompute=False)
    bad("schema_version.json", lambda sc: sc.update(schema="ka-scorecard/0"))
    bad("missing_hash.json", lambda sc: sc["bank"].pop("hash"))
    bad("k_string.json", lambda sc: sc.update(k="5"))
    bad("verdict_enum.json", lambda sc: sc["tasks"][1]["samples"][2].update(verdict="almost_ok"))
    def agg(sc):
        sc["aggregates"]["overall"]["mean_c"]["value"] += 0.01
    bad("aggregates.json", agg)
    def score(sc):
        s = sc["tasks"][3]["samples"][1]
        s["score"] = 0.25 if s["score"] != 0.25 else 0.3
    bad("score.json", score)
    def count(sc):
        sc["aggregates"]["L2"]["n_samples"] = 14
    bad("n_samples.json", count)
    wr = json.load(open(os.path.join(HERE, "good/wrsi_qwen7b.json")))
    wr["summary"]["verdict"] = "negative" if wr["summary"]["verdict"] != "negative" else "positive"
    write("bad/rsi_verdict.json", wr, recompute=False)
    # Schema /2 parts: the ckpt_frozen arm is not part of /1; self_minus_ckpt
    # must be the rows' difference.
    ll = json.load(open(os.path.join(HERE, "good/wrsi_llama8b.json")))
    ll["schema"] = "ka-scorecard/1"
    write("bad/ckpt_v1.json", ll, recompute=False)
    ll = json.load(open(os.path.join(HERE, "good/wrsi_llama8b.json")))
    ll["summary"]["self_minus_ckpt"]["value"] += 0.01
    write("bad/self_minus_ckpt.json", ll, recompute=False)
    with open(os.path.join(HERE, "bad/not_json.json"), "w") as f:
        f.write('{"schema": "ka-scorecard/1", "track": \n')

if __name__ == "__main__":
    main()
