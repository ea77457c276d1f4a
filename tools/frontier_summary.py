#!/usr/bin/env python3
"""frontier_summary.py: the validation figures of one `ka --track frontier`
run (docs/frontier.md, "On a GPU machine") as summary.json and summary.md.

Usage: frontier_summary.py RUN_DIR OUT_DIR [--target T] [--wall-s S]
RUN_DIR is the run's --out (scorecard.json, frontier/validation.json). Per
proposal: each validation step's outcome (ok, failed, or not reached) and its
wall seconds, the outcome and the proposal's wall seconds; per round: wall,
evaluation and validation seconds, proposals and accepted; totals per step.
Reads validation records of version 2 (older records have no seconds: their
cells say "ok" or "FAIL" without a time). Python 3 standard library only.
"""
import argparse
import json
import os
import sys

# The validation steps in the order they run (track_frontier.c).
STEPS = ["reply", "schema", "dialect", "compile", "gold", "degenerate", "baseline",
         "runtime", "novelty", "harder"]


def load(path):
    with open(path) as f:
        return json.load(f)


def proposal_row(v):
    """One validation outcome -> the summary's record of it."""
    steps = {}
    for r in v.get("record", []):
        steps[r["step"]] = {"ok": bool(r.get("ok")), "s": r.get("s"), "why": r.get("why", "")}
    return {"round": v["round"], "parent": v["parent"], "proposal": v["proposal"],
            "name": v.get("name", ""), "outcome": v["step"], "accepted": bool(v["accepted"]),
            "why": v.get("why", ""), "wall_s": v.get("wall_s"), "version": v.get("version", 1),
            "steps": steps}


def step_totals(rows):
    tot = {}
    for p in rows:
        for name, st in p["steps"].items():
            t = tot.setdefault(name, {"n": 0, "failed": 0, "s": 0.0})
            t["n"] += 1
            t["failed"] += 0 if st["ok"] else 1
            t["s"] += st["s"] or 0.0
    return {k: tot[k] for k in STEPS if k in tot}


def cell(st):
    if st is None:
        return "-"
    word = "ok" if st["ok"] else "FAIL"
    return word if st["s"] is None else "%s %.2f" % (word, st["s"])


def markdown(s):
    out = ["# Frontier validation figures (%s)" % s["target"], "",
           "Device: %s. One run of `ka --track frontier` against tools/fakeserver.py "
           "(fsolver, proposer), %d round(s); the script's wall time %.1f s." %
           (s["device"], s["rounds_n"], s["run_wall_s"] or 0), "",
           "| round | wall s | evaluate s | validation s | proposals | accepted | C |",
           "|---|---|---|---|---|---|---|"]
    for r in s["rounds"]:
        out.append("| %d | %s | %s | %s | %d | %d | %.3f |" % (
            r["round"], fmt(r.get("wall_s")), fmt(r.get("evaluate_s")),
            fmt(r.get("validation_s")), r["proposals"], r["accepted"], r["c"]))
    out += ["", "Per proposal: each step's outcome and wall seconds (- not reached).", "",
            "| round | # | name | outcome | " + " | ".join(STEPS[1:]) + " | total s |",
            "|---|---|---|---|" + "---|" * (len(STEPS) - 1) + "---|"]
    for p in s["proposals"]:
        out.append("| %d | %d | %s | %s | %s | %s |" % (
            p["round"], p["proposal"], p["name"] or "?", p["outcome"],
            " | ".join(cell(p["steps"].get(k)) for k in STEPS[1:]), fmt(p["wall_s"])))
    out += ["", "Accepted %d, rejected %d." % (s["accepted"], s["rejected"]), "",
            "| step | runs | failed | seconds |", "|---|---|---|---|"]
    for k, t in s["steps"].items():
        out.append("| %s | %d | %d | %.2f |" % (k, t["n"], t["failed"], t["s"]))
    return "\n".join(out) + "\n"


def fmt(x):
    return "-" if x is None else "%.2f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--target", default="?")
    ap.add_argument("--wall-s", type=float, default=None)
    a = ap.parse_args()
    sc = load(os.path.join(a.run_dir, "scorecard.json"))
    vals = load(os.path.join(a.run_dir, "frontier", "validation.json"))
    props = [proposal_row(v) for v in vals]
    dev = sc.get("device") or {}
    s = {"target": a.target, "device": dev.get("name", "?") if isinstance(dev, dict) else "?",
         "rounds_n": sc["summary"]["rounds"], "run_wall_s": a.wall_s,
         "rounds": [{"round": r["round"], "wall_s": r.get("wall_s"),
                     "evaluate_s": r.get("evaluate_s"),
                     "validation_s": (r.get("validation") or {}).get("s"),
                     "proposals": r["proposals"], "accepted": r["accepted"],
                     "c": r["c"]["value"], "frontier_size": r["frontier_size"]}
                    for r in sc["rounds"]],
         "proposals": props,
         "accepted": sum(p["accepted"] for p in props),
         "rejected": sum(not p["accepted"] for p in props),
         "steps": step_totals(props)}
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    md = markdown(s)
    with open(os.path.join(a.out_dir, "summary.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
