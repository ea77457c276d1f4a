#!/usr/bin/env python3
"""tools/rsi_gpu_bench.py: time and memory of one weight-RSI round at the
1.5B and 7B shapes on a GPU, with random weights (no download), for
docs/PERF.md. Not run in CI (no GPU there); issue 17's H200 figures come
from this script.

For each shape (Qwen2.5-1.5B and Qwen2.5-7B configurations, bf16):
  train   LoRA r 16 on all linear layers, AdamW, --train-steps steps of
          --batch x --seq tokens: tokens/s and peak GPU memory;
  merge   the adapter merged (merge_and_unload): seconds;
  sample  generate with the merged model, --gen-batch prompts of 256 tokens,
          --gen-tokens new tokens each (min_new_tokens forces the length):
          tokens/s and peak memory.
Then one round's time for a bank: 3 arms x (train on --examples SFT
examples of --seq tokens for --epochs, sample k x (train + held-out tasks) x
--reply-tokens), from the measured rates. Prints and writes JSON (--out).

Usage: rsi_gpu_bench.py [--shapes 1.5b,7b] [--out FILE] [--tasks 60] [--k 3]
Only torch, transformers and peft.
"""
import argparse
import json
import sys
import time

SHAPES = {
    "1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                 num_attention_heads=12, num_key_value_heads=2, vocab_size=151936),
    "7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
               num_attention_heads=28, num_key_value_heads=4, vocab_size=152064),
}


def bench(name, a):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen2Config, Qwen2ForCausalLM
    dev = "cuda"
    torch.manual_seed(0)
    cfg = Qwen2Config(max_position_embeddings=32768, tie_word_embeddings=name == "1.5b",
                      **SHAPES[name])
    torch.cuda.reset_peak_memory_stats()
    model = Qwen2ForCausalLM(cfg).to(dev, dtype=torch.bfloat16)
    n_params = sum(p.numel() for p in model.parameters())
    if a.checkpointing:  # engines/torch trains without it; an option here
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device=dev)
    for step in range(a.train_steps + 1):
        if step == 1:  # the first step warms up
            torch.cuda.synchronize()
            t0 = time.time()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    train_tps = a.train_steps * a.batch * a.seq / (time.time() - t0)
    train_mem = torch.cuda.max_memory_allocated() / 2**30
    t0 = time.time()
    model = model.merge_and_unload()
    model.eval()
    # Sampling with the KV cache, as the engine does: gradient checkpointing
    # turns it off (an earlier run of this script sampled without a cache:
    # 700 tokens/s at both shapes).
    if a.checkpointing:
        model.gradient_checkpointing_disable()
    model.config.use_cache = True
    merge_s = time.time() - t0
    del opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    prompt = torch.randint(0, cfg.vocab_size, (a.gen_batch, 256), device=dev)
    with torch.no_grad():
        torch.cuda.synchronize()
        t0 = time.time()
        model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True,
                       max_new_tokens=a.gen_tokens, min_new_tokens=a.gen_tokens,
                       pad_token_id=0, use_cache=True)
        torch.cuda.synchronize()
    gen_tps = a.gen_batch * a.gen_tokens / (time.time() - t0)
    gen_mem = torch.cuda.max_memory_allocated() / 2**30
    # one round, three arms, from the measured rates
    train_tokens = a.examples * a.seq * a.epochs
    gen_tokens = a.k * a.tasks * a.reply_tokens
    round_s = 3 * (train_tokens / train_tps + merge_s + gen_tokens / gen_tps)
    del model
    torch.cuda.empty_cache()
    return {"shape": name, "params": n_params, "train_tokens_per_s": round(train_tps, 1),
            "train_peak_gib": round(train_mem, 1), "checkpointing": a.checkpointing, "merge_s": round(merge_s, 1),
            "sample_tokens_per_s": round(gen_tps, 1), "sample_peak_gib": round(gen_mem, 1),
            "round_estimate_s": round(round_s, 1),
            "round_assumptions": {"arms": 3, "examples": a.examples, "seq": a.seq,
                                  "epochs": a.epochs, "tasks": a.tasks, "k": a.k,
                                  "reply_tokens": a.reply_tokens}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="1.5b,7b")
    ap.add_argument("--out")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--train-steps", type=int, default=5)
    ap.add_argument("--gen-batch", type=int, default=64)
    ap.add_argument("--checkpointing", action="store_true",
                    help="gradient checkpointing in training (the engine does not use it)")
    ap.add_argument("--gen-tokens", type=int, default=512)
    ap.add_argument("--tasks", type=int, default=60, help="train + held-out tasks")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--examples", type=int, default=120)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--reply-tokens", type=int, default=2048)
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("rsi_gpu_bench: no CUDA GPU visible; nothing measured", file=sys.stderr)
        return 0
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "shapes": []}
    for s in a.shapes.split(","):
        if s not in SHAPES:
            print("rsi_gpu_bench: unknown shape '%s' (1.5b, 7b)" % s, file=sys.stderr)
            return 2
        try:
            r = bench(s, a)
        except torch.cuda.OutOfMemoryError as ex:  # a fact to report, not a crash
            r = {"shape": s, "error": "out of GPU memory (batch %d x %d%s): %s"
                 % (a.batch, a.seq, ", checkpointing" if a.checkpointing else "",
                    str(ex).splitlines()[0][:200])}
            torch.cuda.empty_cache()
        print(json.dumps(r), flush=True)
        res["shapes"].append(r)
        if a.out:  # after each shape: a run cut short keeps what it measured
            with open(a.out, "w") as f:
                json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
