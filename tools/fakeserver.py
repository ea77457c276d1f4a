#!/usr/bin/env python3
"""fakeserver.py: a fake model API on loopback for KernelAscent's tests.

Speaks three protocols on one port:
  POST .../chat/completions      OpenAI chat completions
  POST .../v1/messages           Anthropic Messages
  POST /model/<id>/converse      AWS Bedrock Converse; every request's SigV4
                                 signature is recomputed here (hmac/hashlib)
                                 from the known test credentials: 403 if wrong
and two control routes:
  GET  /_stats    {"requests", "max_concurrent", "inflight", "by_protocol"}
  POST /_reset    zero the counters

What a request gets is chosen by a marker in its prompt, "[[fixture:NAME]]":
tests/data/model/NAME.json holds {"responses": [R0, R1, ...]}; the i-th
request with the same fixture, prompt and seed gets R[min(i, last)]. Each R:
  status (200), headers {}, delay_s (0), completion "text" (formatted in the
  request's protocol), usage [in, out] ([11, 7]), error_message (non-2xx: an
  error body in the protocol's shape), raw "body sent as is",
  huge_completion_bytes N (a completion of N bytes), truncate_bytes N (cut
  the JSON body after N bytes).
Without a marker the completion echoes the request's parameters and holds one
```cuda block, except for the personas of the procedure track's tests,
chosen by the model name (docs/procedures.md):
  learner   solves a task (the bank's OpenCL solution, found by the
            "# Task: NAME (" line) only when its strategy STRATEGY-ERF is in
            the prompt, else writes code that does not compile; asked for a
            procedure edit, it proposes that strategy only when the evidence
            shows a FAILED task (or keeps it once it is there)
  null      never solves a task; its edits change nothing that matters
  escaper   never solves; its n-th edit is the n-th sandbox escape attempt
            (os.execute, io.open, require, string.dump, an endless loop, a
            10 GB table) as procedure.lua
and the personas of the frontier track's tests (docs/frontier.md):
  fsolver   solves a task with the bank's solution of the task named by a
            "[[solve-as:NAME]]" marker in the prompt (with "[[solve-as-later:NAME]]"
            only from the second request with that marker on), else of the task itself
            (the "# Task: NAME (" line), else writes code that does not
            compile; the solution is solutions/cuda.cu when the prompt asks
            for the CUDA target, else solutions/opencl.c
  proposer  answers "# Proposal N of M" with the N-th file (sorted, cycling)
            of --frontier-fixtures (tests/data/frontier/*.md)
and the persona of the harness track's tests (docs/harness.md):
  hresearcher  answers "# Harness edit request (round N)" with the N-th file
            (sorted, cycling) of --harness-fixtures (tests/data/harness/*.lua)
            as the new harness.lua
Usage: fakeserver.py [--port 0] [--fixtures DIR] [--bank DIR]
[--frontier-fixtures DIR] [--harness-fixtures DIR] [--exit-on-stdin-eof]; prints the port on its first line, then serves until
killed (or until its stdin closes). Test tooling only: it
trusts its input and binds 127.0.0.1.
"""
import argparse
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Access key -> (secret, session token or None). The first pair is AWS's
# published test-suite credentials.
CREDS = {
    "AKIDEXAMPLE": ("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None),
    "ASIAKATESTTOKEN": ("katest/secret+key", "katest-session-token"),
}
MAX_BODY = 16 << 20
FIXTURE_RE = re.compile(r"\[\[fixture:([A-Za-z0-9_\-]+)\]\]")
AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;\-]+), Signature=([0-9a-f]{64})$")


class State:
    def __init__(self, fixtures):
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests = 0
        self.inflight = 0
        self.max_concurrent = 0
        self.by_protocol = {}
        self.by_model = {}
        self.counters = {}

    def enter(self, proto):
        with self.lock:
            self.requests += 1
            self.inflight += 1
            self.max_concurrent = max(self.max_concurrent, self.inflight)
            self.by_protocol[proto] = self.by_protocol.get(proto, 0) + 1

    def leave(self):
        with self.lock:
            self.inflight -= 1

    def next_index(self, key):
        with self.lock:
            i = self.counters.get(key, 0)
            self.counters[key] = i + 1
            return i


def sigv4_check(method, raw_path, headers, body):
    """None if the request is signed right, else why not."""
    auth = headers.get("Authorization", "")
    m = AUTH_RE.match(auth)
    if not m:
        return "missing or malformed Authorization header"
    ak, date8, region, service, signed, sig = m.groups()
    if ak not in CREDS:
        return "unknown access key " + ak
    secret, token = CREDS[ak]
    if service != "bedrock":
        return "service must be bedrock, not " + service
    names = signed.split(";")
    if names != sorted(names) or "host" not in names or "x-amz-date" not in names:
        return "signed headers must be sorted and include host and x-amz-date"
    amz_date = headers.get("X-Amz-Date", "")
    if not amz_date.startswith(date8):
        return "x-amz-date does not match the credential scope date"
    if token is not None:
        if headers.get("X-Amz-Security-Token") != token or "x-amz-security-token" not in names:
            return "session token missing, wrong or unsigned"
    path, _, query = raw_path.partition("?")
    canon_uri = "/".join(urllib.parse.quote(seg, safe="-_.~") for seg in path.split("/"))
    params = sorted(
        (urllib.parse.quote(urllib.parse.unquote(k), safe="-_.~"),
         urllib.parse.quote(urllib.parse.unquote(v), safe="-_.~"))
        for k, _, v in (p.partition("=") for p in query.split("&") if p))
    canon_query = "&".join(k + "=" + v for k, v in params)
    canon_headers = ""
    for n in names:
        v = headers.get(n)
        if v is None:
            return "signed header %s not sent" % n
        canon_headers += n + ":" + " ".join(v.strip().split()) + "\n"
    creq = "\n".join([method, canon_uri, canon_query, canon_headers, signed,
                      hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/%s/aws4_request" % (date8, region, service)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (date8, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, sig):
        return "The request signature we calculated does not match the signature you provided"
    return None


def parse_request(proto, body):
    """(prompt, system, seed, params) of a request, or raise ValueError."""
    req = json.loads(body)
    if not isinstance(req, dict):
        raise ValueError("body is not a JSON object")
    if proto == "openai":
        if "model" not in req or not isinstance(req.get("messages"), list):
            raise ValueError("'model' and 'messages' are required")
        system = "".join(m.get("content", "") for m in req["messages"] if m.get("role") == "system")
        prompt = req["messages"][-1].get("content", "")
        params = {k: req.get(k) for k in ("temperature", "top_p", "max_tokens", "seed")}
        return prompt, system, req.get("seed"), params
    if proto == "anthropic":
        if "max_tokens" not in req or not isinstance(req.get("messages"), list):
            raise ValueError("max_tokens: field required")
        c = req["messages"][-1].get("content", "")
        prompt = c if isinstance(c, str) else "".join(b.get("text", "") for b in c)
        params = {k: req.get(k) for k in ("temperature", "top_p", "max_tokens")}
        return prompt, req.get("system", ""), None, params
    msgs = req.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise ValueError("messages is required")
    prompt = "".join(b.get("text", "") for b in msgs[-1].get("content", []))
    system = "".join(b.get("text", "") for b in req.get("system", []))
    cfg = req.get("inferenceConfig", {})
    params = {k: cfg.get(k) for k in ("temperature", "topP", "maxTokens")}
    return prompt, system, None, params


def success_body(proto, model, text, usage):
    a, b = usage
    if proto == "openai":
        return {"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": a, "completion_tokens": b, "total_tokens": a + b}}
    if proto == "anthropic":
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": a, "output_tokens": b}}
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": a, "outputTokens": b, "totalTokens": a + b},
            "metrics": {"latencyMs": 1}}


def error_body(proto, msg):
    if proto == "openai":
        return {"error": {"message": msg, "type": "invalid_request_error"}}
    if proto == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    return {"message": msg}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=None, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self):
        st = self.server.state
        if self.path == "/_stats":
            with st.lock:
                self.send(200, {"requests": st.requests, "max_concurrent": st.max_concurrent,
                                "inflight": st.inflight, "by_protocol": st.by_protocol,
                                "by_model": st.by_model})
        else:
            self.send(404, {"message": "not found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        if n > MAX_BODY:
            self.send(413, {"message": "too big"})
            return
        body = self.rfile.read(n)
        st = self.server.state
        path = self.path.split("?")[0]
        if path == "/_reset":
            with st.lock:
                st.reset()
            self.send(200, {"ok": True})
            return
        model = None
        if path.endswith("/chat/completions"):
            proto = "openai"
        elif path.endswith("/messages"):
            proto = "anthropic"
        else:
            m = re.match(r"^/model/([^/]+)/converse$", path)
            if not m:
                self.send(404, {"message": "no route for " + path})
                return
            proto, model = "bedrock", urllib.parse.unquote(m.group(1))
        st.enter(proto)
        try:
            self.serve_model(proto, model, body)
        finally:
            st.leave()

    def serve_model(self, proto, model, body):
        st = self.server.state
        if proto == "bedrock":
            why = sigv4_check("POST", self.path, self.headers, body)
            if why:
                self.send(403, {"message": why},
                          {"x-amzn-ErrorType": "InvalidSignatureException"})
                return
        if proto == "anthropic" and not self.headers.get("anthropic-version"):
            self.send(400, error_body(proto, "anthropic-version: header is required"))
            return
        try:
            prompt, system, seed, params = parse_request(proto, body)
        except ValueError as e:
            self.send(400, error_body(proto, str(e)))
            return
        if model is None:
            model = json.loads(body).get("model", "")
        with st.lock:
            st.by_model[model] = st.by_model.get(model, 0) + 1
        if model in PERSONAS:
            text = PERSONAS[model](st, prompt)
            usage = [max(1, len(prompt) // 4), max(1, len(text) // 4)]
            self.send(200, success_body(proto, model, text, usage))
            return
        fm = FIXTURE_RE.search(prompt)
        if not fm:
            text = ("model=%s seed=%s params=%s system=%d prompt=%s\n```cuda\n"
                    "__global__ void k(float *x) { x[0] = %s; }\n```\n" %
                    (model, seed, json.dumps(params, sort_keys=True), len(system),
                     prompt[:80], seed if seed is not None else 0))
            self.send(200, success_body(proto, model, text, [11, 7]))
            return
        name = fm.group(1)
        try:
            with open(os.path.join(st.fixtures, name + ".json")) as f:
                fixture = json.load(f)
        except OSError as e:
            self.send(500, error_body(proto, "fixture %s: %s" % (name, e)))
            return
        responses = fixture["responses"]
        i = st.next_index((name, prompt, seed))
        r = responses[min(i, len(responses) - 1)]
        if r.get("delay_s"):
            time.sleep(r["delay_s"])
        status = r.get("status", 200)
        headers = r.get("headers", {})
        if "raw" in r:
            self.send(status, r["raw"], headers, content_type=r.get("content_type", "text/html"))
            return
        if status >= 300:
            self.send(status, error_body(proto, r.get("error_message", "error %d" % status)),
                      headers)
            return
        if "huge_completion_bytes" in r:
            text = "x" * r["huge_completion_bytes"]
        else:
            text = r.get("completion", "").replace("{seed}", str(seed))
        out = json.dumps(success_body(proto, model, text, r.get("usage", [11, 7]))).encode()
        if "truncate_bytes" in r:
            out = out[:r["truncate_bytes"]]
        self.send(status, out, headers)


# ---- personas of the procedure track's tests ----------------------------------
TASK_RE = re.compile(r"# Task: (\S+) \(")
STRATEGY = "STRATEGY-ERF"
EDIT_MARK = "# Procedure edit request"
WRONG = "```c\n/* not yet */\nint ka_kernel_missing = ;\n```\n"
ESCAPES = [
    'function solve() os.execute("touch /tmp/ka_escaped") end\n',
    'function solve() local f = io.open("/etc/passwd") ka.submit(f:read("a")) end\n',
    'function solve() local s = require("socket") end\n',
    'function solve() ka.submit(string.dump(solve)) end\n',
    'function solve() while true do end end\n',
    'function solve() local t = {} for i = 1, 10e9 do t[i] = i end end\n',
]


def wants_cuda(prompt):
    """Whether a solver prompt asks for the CUDA target (prompts/solver.md)."""
    return "for the CUDA target" in prompt


def solution_text(st, name, prompt):
    """The bank's solution of task name for the prompt's target, as a reply
    (```c for OpenCL, ```cuda for CUDA), or None."""
    cuda = wants_cuda(prompt)
    path = (st.cuda_solutions if cuda else st.solutions).get(name)
    if not path:
        return None
    with open(path) as f:
        return "Here is the kernel.\n```%s\n%s```\n" % ("cuda" if cuda else "c", f.read())


def solution_of(st, prompt):
    m = TASK_RE.search(prompt)
    return solution_text(st, m.group(1), prompt) if m else None


def evidence_of(prompt):
    i = prompt.find("## Evidence from this round")
    return prompt[i:] if i >= 0 else ""


def learner(st, prompt):
    if EDIT_MARK in prompt:
        if "FAILED" in evidence_of(prompt) or STRATEGY in prompt:
            return ("I will add a strategy.\n=== file: strategies.md ===\n" + STRATEGY +
                    ": compute the exact GELU with erf in fp32, one work item per "
                    "element, guard the row and column bounds.\n=== end ===\n")
        return "Nothing failed; no change."
    if STRATEGY in prompt:
        return solution_of(st, prompt) or WRONG
    return WRONG


def null(st, prompt):
    if EDIT_MARK in prompt:
        return ("=== file: strategies.md ===\nSTRATEGY-NOOP: be careful.\n=== end ===\n")
    return WRONG


def escaper(st, prompt):
    if EDIT_MARK in prompt:
        i = st.next_index(("escaper-edit",))
        return ("=== file: procedure.lua ===\n" + ESCAPES[i % len(ESCAPES)] +
                "=== end ===\n")
    return WRONG


PERSONAS = {"learner": learner, "null": null, "escaper": escaper}


# ---- personas of the frontier track's tests -----------------------------------
SOLVE_AS_RE = re.compile(r"\[\[solve-as:([a-z0-9_]+)\]\]")
SOLVE_LATER_RE = re.compile(r"\[\[solve-as-later:([a-z0-9_]+)\]\]")
PROPOSAL_RE = re.compile(r"# Proposal (\d+) of (\d+)")


def fsolver(st, prompt):
    later = SOLVE_LATER_RE.search(prompt)
    if later and st.next_index("solve-as-later:" + later.group(1)) == 0:
        return WRONG
    m = SOLVE_AS_RE.search(prompt) or later
    text = solution_text(st, m.group(1), prompt) if m else None
    return text or solution_of(st, prompt) or WRONG


def nth_fixture(d, ext, m):
    """The text of the m.group(1)-th file (1-based, sorted, cycling) of d
    ending in ext, or None when there is no match or no such file."""
    files = sorted(f for f in os.listdir(d) if f.endswith(ext)) if d else []
    if not m or not files:
        return None
    with open(os.path.join(d, files[(int(m.group(1)) - 1) % len(files)])) as f:
        return f.read()


def proposer(st, prompt):
    text = nth_fixture(st.frontier_fixtures, ".md", PROPOSAL_RE.search(prompt))
    return text if text is not None else "I have no proposal."


PERSONAS.update({"fsolver": fsolver, "proposer": proposer})


# ---- the persona of the harness track's tests ----------------------------------
HARNESS_EDIT_RE = re.compile(r"# Harness edit request \(round (\d+)\)")


def hresearcher(st, prompt):
    body = nth_fixture(st.harness_fixtures, ".lua", HARNESS_EDIT_RE.search(prompt))
    if body is None:
        return "I have no edit."
    return "Here is the new harness.\n=== file: harness.lua ===\n" + body + "=== end ===\n"


PERSONAS["hresearcher"] = hresearcher


def scan_solutions(bank, sol="opencl.c"):
    """task name -> its solutions/SOL file, for every task.json under bank."""
    out = {}
    for root, _, files in os.walk(bank):
        if "task.json" in files:
            try:
                with open(os.path.join(root, "task.json")) as f:
                    name = json.load(f)["name"]
            except (OSError, ValueError, KeyError):
                continue
            path = os.path.join(root, "solutions", sol)
            if os.path.exists(path):
                out[name] = path
    return out


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # Clients that time out hang up on purpose: not worth a traceback.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--exit-on-stdin-eof", action="store_true",
                    help="exit when stdin closes (so a crashed test leaves no server)")
    ap.add_argument("--fixtures", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "model"))
    ap.add_argument("--bank", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "bank", "public"),
        help="where the learner and fsolver personas find the tasks' solutions")
    ap.add_argument("--frontier-fixtures", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "frontier"),
        help="the proposer persona's replies (*.md, sorted)")
    ap.add_argument("--harness-fixtures", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "harness"),
        help="the hresearcher persona's harness.lua edits (*.lua, sorted)")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(args.fixtures)
    srv.state.solutions = scan_solutions(args.bank)
    srv.state.cuda_solutions = scan_solutions(args.bank, "cuda.cu")
    srv.state.frontier_fixtures = (args.frontier_fixtures
                                   if os.path.isdir(args.frontier_fixtures) else None)
    srv.state.harness_fixtures = (args.harness_fixtures
                                  if os.path.isdir(args.harness_fixtures) else None)
    print(srv.server_address[1], flush=True)
    if args.exit_on_stdin_eof:
        def watch():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
