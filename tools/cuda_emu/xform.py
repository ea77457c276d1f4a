#!/usr/bin/env python3
"""xform.py IN OUT: rewrites one file of the bank's trusted CUDA code (a
baseline, a bank/lib header, a solution) into the host C++ that g++ compiles
against tools/cuda_emu/emu.h (docs/cuda-emu.md). Trusted code only: the
rewrite is textual, for the forms the bank writes.

  kernel<<<grid, block[, smem[, stream]]>>>(args);
      -> ::ka_emu::launch(dim3(grid), dim3(block), smem, stream, "kernel",
             [](auto &&...a) { kernel(a...); }, args);
  __global__ ... name(params) {        (a kernel definition)
      -> the same, then KA_EMU_KERNEL(&name<its template parameters>,
         its __launch_bounds__ maximum or 0); as the first statement
  extern __shared__ [__align__(n)] T name[];
      -> T *name = (T *)::ka_emu::dyn_shared();
  __shared__ T name[...];
      -> static T name[...]; KA_EMU_SHARED(name);

Comments and string literals are not searched. Line breaks are kept (each
replacement keeps the newlines of what it replaces) and a #line directive
names the original file, so g++'s messages point at the source. Exits 1
with a message on a form it does not know.
"""
import re
import sys


class Fail(Exception):
    pass


def mask_of(src):
    """src with comments, string and character literals blanked (newlines
    kept): the text the rewrites search."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def match_close(s, i):
    """Index just past the bracket that closes the one at s[i]."""
    pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
    o, c = s[i], pairs[s[i]]
    depth = 0
    for j in range(i, len(s)):
        if s[j] == o:
            depth += 1
        elif s[j] == c:
            depth -= 1
            if depth == 0:
                return j + 1
    raise Fail("no closing '%s'" % c)


def split_top(s, angles=False):
    """s split at commas outside (), [] and {} (and <> when angles: a
    template parameter list)."""
    opens, closes = ("([{<", ")]}>") if angles else ("([{", ")]}")
    out, depth, cur = [], 0, ""
    for c in s:
        if c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def nl(s):
    return "\n" * s.count("\n")


def callee_start(m, end):
    """Start of the callee that ends at m[end]: a name with namespaces and
    one template argument list."""
    j = end
    while j > 0 and m[j - 1].isspace():
        j -= 1
    if m[j - 1] == ">":
        depth = 0
        while j > 0:
            j -= 1
            if m[j] == ">":
                depth += 1
            elif m[j] == "<":
                depth -= 1
                if depth == 0:
                    break
    while j > 0 and (m[j - 1].isalnum() or m[j - 1] in "_:"):
        j -= 1
    return j


def rewrite_launches(src):
    m = mask_of(src)
    out, pos = [], 0
    for i in [x.start() for x in re.finditer(r"<<<", m)]:
        if i < pos:
            continue
        k = callee_start(m, i)
        callee = re.sub(r"\s+", " ", src[k:i].strip())
        e = m.find(">>>", i)
        if e < 0 or not callee:
            raise Fail("a launch without a callee or without >>>")
        cfg = [c.strip() for c in split_top(src[i + 3 : e])]
        if not 2 <= len(cfg) <= 4:
            raise Fail("a launch configuration of %d parts" % len(cfg))
        cfg += ["0"] * (4 - len(cfg))
        p = e + 3
        while m[p].isspace():
            p += 1
        if m[p] != "(":
            raise Fail("a launch without an argument list")
        q = match_close(m, p)
        # NULL (g++'s __null, a long) would reach a pointer parameter as a
        # long variable: nullptr converts as the literal does.
        args = ",".join(re.sub(r"^(\s*)NULL(\s*)$", r"\1nullptr\2", a) for a in split_top(src[p + 1 : q - 1]))
        call = (
            '::ka_emu::launch(dim3(%s), dim3(%s), (size_t)(%s), (%s), "%s", '
            "[](auto &&...ka_a) { %s(ka_a...); }%s%s)"
            % (cfg[0], cfg[1], cfg[2], cfg[3], callee, callee, ", " if args.strip() else "", args)
        )
        out.append(src[pos:k])
        out.append(call.replace("\n", " ") + nl(src[k:q]))
        pos = q
    out.append(src[pos:])
    return "".join(out)


def template_args(m, at):
    """'<A, B...>' naming the parameters of the template that the
    declaration at m[at] belongs to, '' when it is not a template."""
    head = m[:at].rstrip()
    if not head.endswith(">"):
        return ""
    t = head.rfind("template")
    while t >= 0:
        lt = m.find("<", t)
        if lt >= 0 and m[t + 8 : lt].strip() == "" and match_close(m, lt) == len(head):
            names = []
            for p in split_top(m[lt + 1 : len(head) - 1], angles=True):
                p = p.split("=")[0]
                ids = re.findall(r"[A-Za-z_]\w*", p)
                if not ids:
                    raise Fail("template parameters the rewrite does not follow")
                names.append(ids[-1] + ("..." if "..." in p else ""))
            return "<%s>" % ", ".join(names)
        t = head.rfind("template", 0, t)
    return ""


def rewrite_kernels(src):
    m = mask_of(src)
    out, pos = [], 0
    for g in re.finditer(r"\b__global__\b", m):
        j, bounds, name = g.end(), "0", None
        while name is None:
            w = re.compile(r"[\s*&]*([A-Za-z_]\w*)\s*(\(?)").match(m, j)
            if not w:
                raise Fail("a __global__ declaration the rewrite does not follow")
            if w.group(1) == "__launch_bounds__":
                q = match_close(m, w.end() - 1)
                bounds = split_top(src[w.end() : q - 1])[0].strip()
                j = q
            elif w.group(2):
                name, j = w.group(1), w.end() - 1
            else:
                j = w.end()
        b = match_close(m, j)
        while m[b].isspace():
            b += 1
        if m[b] != "{":
            continue  # a declaration, not the definition
        targs = template_args(m, g.start())
        out.append(src[pos : b + 1])
        out.append(" KA_EMU_KERNEL(%s, &%s%s);" % (bounds, name, targs))
        pos = b + 1
    out.append(src[pos:])
    return "".join(out)


def rewrite_shared(src):
    m = mask_of(src)
    out, pos = [], 0
    for d in re.finditer(r"\b(extern\s+)?__shared__\b([^;]*);", m):
        decl = src[d.start(2) : d.end(2)]
        bare = re.sub(r"__align__\s*\(\s*\w+\s*\)|alignas\s*\(\s*\w+\s*\)", "", decl).strip()
        if d.group(1):
            dm = re.fullmatch(r"(.*?)\s*\b(\w+)\s*\[\s*\]", bare, re.S)
            if not dm:
                raise Fail("an extern __shared__ declaration that is not 'T name[]'")
            t = re.sub(r"\s+", " ", dm.group(1))
            new = "%s *%s = (%s *)::ka_emu::dyn_shared();" % (t, dm.group(2), t)
        else:
            before = decl.split("[")[0]
            if "," in before or "=" in decl:
                raise Fail("a __shared__ declaration of several variables or with an initializer")
            ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"__align__\s*\(\s*\w+\s*\)", "", before))
            if len(ids) < 2:
                raise Fail("a __shared__ declaration without a type and a name")
            new = "static %s; KA_EMU_SHARED(%s);" % (re.sub(r"\s+", " ", decl.strip()), ids[-1])
        out.append(src[pos : d.start()])
        out.append(new + nl(src[d.start() : d.end()]))
        pos = d.end()
    out.append(src[pos:])
    return "".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: xform.py IN OUT")
    path = sys.argv[1]
    src = open(path).read()
    try:
        src = rewrite_launches(rewrite_kernels(rewrite_shared(src)))
    except Fail as e:
        sys.exit("xform.py: %s: %s" % (path, e))
    with open(sys.argv[2], "w") as f:
        f.write('#line 1 "%s"\n' % path)
        f.write(src)


if __name__ == "__main__":
    main()
