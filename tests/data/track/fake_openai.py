#!/usr/bin/env python3
"""fake_openai.py: a fake OpenAI-compatible /v1/chat/completions server on
loopback for the capability track's tests (tests/e2e/track_capability.sh).

Each request's task comes from the prompt's "# Task: NAME (" line and its
sample from its seed (sample = seed - --seed-base). What it answers is chosen
by --plan, a JSON object {task: [kind of sample 0, kind of sample 1, ...]}
(samples past the list get "correct"). Kinds:
  correct   the bank's OpenCL solution of the task, in a ```c block
  wrong     the same with the GELU's 0.5f changed to 0.51f: wrong_answer
  nocode    prose without a code block: no_code
  syntax    a block that does not compile: compile_error
Every request received is appended to --log as one JSON line {"task",
"sample", "t", "sha256", "system"} (t: wall-clock time of receipt; sha256 of
the last message; system: whether other messages came with it) before it is
answered, after
--delay seconds. Prints the port on its first line; exits when its stdin
closes. Test tooling only: binds 127.0.0.1 and trusts its input.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TASK_RE = re.compile(r"^# Task: (\S+) \(", re.M)


def find_solution(bank, task):
    for root, dirs, files in os.walk(bank):
        if os.path.basename(root) == task and "task.json" in files:
            with open(os.path.join(root, "solutions", "opencl.c")) as f:
                return f.read()
    raise KeyError(task)


def reply_text(kind, solution):
    if kind == "correct":
        return "Here is the kernel.\n\n```c\n" + solution + "```\n"
    if kind == "wrong":
        bad = solution.replace("0.5f * v", "0.51f * v")
        assert bad != solution
        return "```c\n" + bad + "```\n"
    if kind == "nocode":
        return "I would write a kernel that applies the operation elementwise."
    if kind == "syntax":
        return "```c\nint ka_launch(const struct ka_args *a, {\n```\n"
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bank", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--seed-base", type=int, default=0)
    args = ap.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            req = json.loads(self.rfile.read(n))
            prompt = req["messages"][-1]["content"]
            m = TASK_RE.search(prompt)
            task = m.group(1) if m else "?"
            sample = int(req.get("seed", args.seed_base)) - args.seed_base
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps({"task": task, "sample": sample, "t": time.time(),
                                        "sha256": hashlib.sha256(prompt.encode()).hexdigest(),
                                        "system": len(req["messages"]) > 1}) + "\n")
                    f.flush()
            time.sleep(args.delay)
            kinds = plan.get(task, [])
            kind = kinds[sample] if 0 <= sample < len(kinds) else "correct"
            text = reply_text(kind, find_solution(args.bank, task))
            body = json.dumps({
                "id": "fake-%s-%d" % (task, sample),
                "object": "chat.completion",
                "model": req.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 1000 + sample, "completion_tokens": 100 + sample},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # a client killed mid-reply (the kill tests) is expected

    srv = Server(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test's pipe closes
    srv.shutdown()


if __name__ == "__main__":
    main()
