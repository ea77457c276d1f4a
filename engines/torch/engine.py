#!/usr/bin/env python3
"""engines/torch/engine.py: the PyTorch engine of KernelAscent's weight-RSI
track (docs/engines.md). Usage: engine.py MANIFEST.json RESULT.json.

Speaks ka-engine/1: reads the manifest, does one op, writes the result JSON
({"format": "ka-engine/1", "ok": true, ...} or "ok": false with "error", one
line). Ops:
  sample  model, prompts [{id, text}], k, temperature, max_tokens, seed, out
          -> out is JSONL, one line per (prompt, sample):
             {"id", "sample", "text", "tokens_in", "tokens_out"}
  train   base, examples (JSONL of {"prompt", "completion"}), hyper (method,
          epochs, lr, batch, lora_r, lora_alpha, max_len, order "shuffle" or
          "as_given"), seed, out
          -> out is a folder: a full checkpoint (method "full") or a peft
             LoRA adapter (method "lora"); written to out.tmp, then renamed
  merge   base, adapter, out -> a full checkpoint with the adapter merged
Uses torch, transformers, peft (LoRA only) and safetensors; nothing else.
"""
import json
import math
import os
import random
import shutil
import sys
import time

FORMAT = "ka-engine/1"


class EngineError(Exception):
    pass


def load_model(path, dtype=None):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    adapter = os.path.isdir(path) and os.path.exists(os.path.join(path, "adapter_config.json"))
    try:
        if adapter:
            from peft import AutoPeftModelForCausalLM
            model = AutoPeftModelForCausalLM.from_pretrained(path, dtype=dtype)
            tok = AutoTokenizer.from_pretrained(path)
            model = model.merge_and_unload()
        else:
            tok = AutoTokenizer.from_pretrained(path)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except Exception as ex:  # any loader failure is the user's model
        msg = str(ex).strip().splitlines()
        raise EngineError("cannot load model '%s': %s" % (path, msg[0] if msg else type(ex).__name__))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    return model.to(dev), tok, dev


def pick_dtype():
    import torch
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def seed_all(seed):
    import torch
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def op_sample(m):
    import torch
    model, tok, dev = load_model(m["model"], pick_dtype())
    model.eval()
    k, temp, max_new = int(m["k"]), float(m["temperature"]), int(m["max_tokens"])
    batch = int(m.get("batch", 64))
    tok.padding_side = "left"
    jobs = [(p["id"], p["text"], s) for p in m["prompts"] for s in range(k)]
    out = m["out"]
    tmp = out + ".tmp"
    n_out = 0
    with open(tmp, "w") as f:
        for b0 in range(0, len(jobs), batch):
            chunk = jobs[b0:b0 + batch]
            # one seed per batch, from the run seed and the batch's position
            seed_all(int(m["seed"]) * 1000003 + b0)
            enc = tok([c[1] for c in chunk], return_tensors="pt", padding=True).to(dev)
            with torch.no_grad():
                gen = model.generate(**enc, do_sample=temp > 0, temperature=temp if temp > 0 else None,
                                     top_p=1.0, top_k=0, max_new_tokens=max_new,
                                     pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
            n_in = enc["input_ids"].shape[1]
            for row, c in zip(gen, chunk):
                new = row[n_in:]
                if tok.eos_token_id is not None:
                    stop = (new == tok.eos_token_id).nonzero()
                    if len(stop):
                        new = new[:int(stop[0]) + 1]
                text = tok.decode(new, skip_special_tokens=True)
                f.write(json.dumps({"id": c[0], "sample": c[2], "text": text,
                                    "tokens_in": len(tok(c[1])["input_ids"]),
                                    "tokens_out": int(new.shape[0])}) + "\n")
                n_out += int(new.shape[0])
    os.replace(tmp, out)
    return {"replies": len(jobs), "tokens_out": n_out}


def read_examples(path):
    ex = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                d = json.loads(line)
                ex.append((d["prompt"], d["completion"]))
    if not ex:
        raise EngineError("train: %s holds no examples" % path)
    return ex


def op_train(m):
    import torch
    h = m.get("hyper", {})
    seed_all(int(m["seed"]))
    model, tok, dev = load_model(m["base"], pick_dtype() if h.get("method") == "lora" else None)
    n_params = sum(p.numel() for p in model.parameters())
    method = h.get("method", "auto")
    if method == "auto":
        method = "full" if n_params < 100_000_000 else "lora"
    if method == "lora":
        from peft import LoraConfig, get_peft_model
        cfg = LoraConfig(r=int(h.get("lora_r", 16)), lora_alpha=int(h.get("lora_alpha", 32)),
                         lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
        model = get_peft_model(model, cfg)
    model.train()
    ex = read_examples(m["examples"])
    max_len = int(h.get("max_len", 2048))
    rows = []
    for p, c in ex:
        pi = tok(p)["input_ids"]
        ci = tok(c)["input_ids"] + ([tok.eos_token_id] if tok.eos_token_id is not None else [])
        ids = (pi + ci)[:max_len]
        labels = ([-100] * len(pi) + ci)[:max_len]
        rows.append((ids, labels))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=float(h.get("lr", 1e-4)), weight_decay=0.0)
    epochs, bs = int(h.get("epochs", 1)), int(h.get("batch", 8))
    steps = epochs * math.ceil(len(rows) / bs)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / max(1, steps)))
    rng = random.Random(int(m["seed"]))
    t0, ntok, step, loss_v = time.time(), 0, 0, float("nan")
    as_given = h.get("order", "shuffle") == "as_given"  # a curriculum: the file's order
    for _ in range(epochs):
        order = list(range(len(rows)))
        if not as_given:
            rng.shuffle(order)
        for b0 in range(0, len(order), bs):
            batch = [rows[i] for i in order[b0:b0 + bs]]
            L = max(len(r[0]) for r in batch)
            pad = tok.pad_token_id
            ids = torch.tensor([r[0] + [pad] * (L - len(r[0])) for r in batch], device=dev)
            lab = torch.tensor([r[1] + [-100] * (L - len(r[1])) for r in batch], device=dev)
            att = torch.tensor([[1] * len(r[0]) + [0] * (L - len(r[0])) for r in batch], device=dev)
            loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            ntok += int(att.sum())
            step += 1
            loss_v = float(loss)
    out = m["out"]
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    if method == "lora":  # the adapter folder names its base for loading
        with open(os.path.join(tmp, "ka_base.json"), "w") as f:
            json.dump({"base": m["base"]}, f)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    dt = time.time() - t0
    return {"method": method, "params": n_params, "examples": len(rows), "steps": step,
            "tokens": ntok, "seconds": round(dt, 3), "tokens_per_s": round(ntok / max(dt, 1e-9), 1),
            "final_loss": loss_v}


def op_merge(m):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer
    try:
        base = AutoModelForCausalLM.from_pretrained(m["base"])
        tok = AutoTokenizer.from_pretrained(m["base"])
        model = PeftModel.from_pretrained(base, m["adapter"]).merge_and_unload()
    except Exception as ex:
        raise EngineError("merge: cannot load %s + %s: %s" % (m["base"], m["adapter"],
                                                              str(ex).strip().splitlines()[0]))
    out = m["out"]
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return {}


OPS = {"sample": op_sample, "train": op_train, "merge": op_merge}


def main():
    if len(sys.argv) != 3:
        print("usage: engine.py MANIFEST.json RESULT.json", file=sys.stderr)
        return 2
    res = {"format": FORMAT, "ok": False}
    try:
        with open(sys.argv[1]) as f:
            m = json.load(f)
        if m.get("format") != FORMAT:
            raise EngineError("manifest format '%s', this engine speaks %s" % (m.get("format"), FORMAT))
        if m.get("op") not in OPS:
            raise EngineError("unknown op '%s' (sample, train, merge)" % m.get("op"))
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as ex:
            raise EngineError("the torch engine needs torch and transformers: %s" % ex)
        t0 = time.time()
        res.update(OPS[m["op"]](m))
        res.update({"ok": True, "op": m["op"], "wall_s": round(time.time() - t0, 3)})
    except EngineError as ex:
        res["error"] = str(ex)
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f)
    os.replace(tmp, sys.argv[2])
    if not res["ok"]:
        print("engine: " + res["error"], file=sys.stderr)
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
