#!/usr/bin/env python3
"""tools/make_tiny_model.py: make a tiny causal language model for testing
the weight-RSI track on a CPU (docs/rsi.md). A byte-level BPE tokenizer is
trained on the bank's text (task names, descriptions, OpenCL solutions) with
the tokenizers library; a Llama-shaped config of a few hundred thousand
parameters is built with transformers and briefly pretrained on the
public OpenCL solutions of the given tasks, each as

    <prompt>```opencl\n<solution>```<eos>

where <prompt> is the short prompt `ka --track rsi --prompt-style short`
sends: "task: NAME\n### opencl\n". So at round 0 the model writes some
tasks' solutions from their names, not all and not always.

Usage: make_tiny_model.py --bank BANK --out DIR [--tier L1] [--steps N]
       [--seed S] [--keep-frac F]
--keep-frac: the fraction of tasks whose solution is pretrained (default 1).
Only torch, transformers and tokenizers. Runs in a few minutes on 2 cores.
"""
import argparse
import json
import os
import random
import sys
import time


def short_prompt(name):
    # the same text as track_rsi.c's short prompt
    return "task: %s\n### opencl\n" % name


def load_tasks(bank, tier):
    out = []
    for t in sorted(os.listdir(bank)):
        td = os.path.join(bank, t)
        if not os.path.isdir(td) or (tier and t != tier):
            continue
        for name in sorted(os.listdir(td)):
            d = os.path.join(td, name)
            sol = os.path.join(d, "solutions", "opencl.c")
            if os.path.exists(sol) and os.path.exists(os.path.join(d, "task.json")):
                with open(sol) as f:
                    code = f.read()
                with open(os.path.join(d, "task.json")) as f:
                    desc = json.load(f).get("description", "")
                out.append((name, desc, code))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bank", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tier", default="L1")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--keep-frac", type=float, default=1.0)
    a = ap.parse_args()
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(a.seed)
    random.seed(a.seed)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    tasks = load_tasks(a.bank, a.tier)
    if not tasks:
        print("make_tiny_model: no task with an OpenCL solution in %s" % a.bank, file=sys.stderr)
        return 2
    texts = [short_prompt(n) + "```opencl\n" + c + "```" for n, d, c in tasks]
    corpus = texts + [d for _, d, _ in tasks]

    tk = Tokenizer(models.BPE(unk_token=None))
    # lines are the pre-tokens: BPE merges whole common lines of the kernels
    # into one token, so a solution is about 80 tokens, not 1000
    tk.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split("\n", behavior="merged_with_previous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=a.vocab, special_tokens=["<pad>", "<eos>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator(corpus, tr)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>",
                                  bos_token="<eos>")
    keep = [t for t in texts]
    random.Random(a.seed).shuffle(keep)
    keep = keep[:max(1, int(round(len(keep) * a.keep_frac)))]
    rows = [tok(t)["input_ids"] + [tok.eos_token_id] for t in keep]
    max_len = max(len(r) for r in rows)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=192,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=max(1024, max_len + 64), tie_word_embeddings=True,
                      bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    pad = tok.pad_token_id
    ids = torch.tensor([r + [pad] * (max_len - len(r)) for r in rows])
    att = torch.tensor([[1] * len(r) + [0] * (max_len - len(r)) for r in rows])
    lab = ids.masked_fill(att == 0, -100)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.05, 1 - s / a.steps))
    t0 = time.time()
    model.train()
    for step in range(a.steps):
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 50 == 0 or step == a.steps - 1:
            print("step %d loss %.4f (%.0fs)" % (step, loss.item(), time.time() - t0), flush=True)
    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    tok.save_pretrained(a.out)
    with open(os.path.join(a.out, "ka_tiny.json"), "w") as f:
        json.dump({"tasks": len(tasks), "pretrained_on": len(keep), "params": n_params,
                   "steps": a.steps, "max_len": max_len, "seconds": round(time.time() - t0, 1)}, f)
    print("make_tiny_model: %d params, %d tasks (%d pretrained), max %d tokens, %.0fs -> %s"
          % (n_params, len(tasks), len(keep), max_len, time.time() - t0, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
