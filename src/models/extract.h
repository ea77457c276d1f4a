/* extract.h: the kernel source in a model's reply. Finds fenced code blocks
 * (``` or ~~~) in Markdown-ish text and picks the one in the expected
 * language. It does not judge the code: an empty or wrong block is the
 * grader's business. */
#ifndef KA_EXTRACT_H
#define KA_EXTRACT_H

/* The code of the last fenced block in reply written in lang ("cuda",
 * "opencl" or "c"; NULL accepts any language). Blocks are ranked: a block
 * tagged with the language itself (cuda/cu; opencl/cl/c; c) beats one tagged
 * with a close relative (c++, cpp, c, h for cuda; c++, cpp for opencl and c),
 * which beats an untagged block; blocks tagged with another language
 * (python, bash, ...) are never taken. Within a rank the last block wins.
 * Text inside <think>...</think> is ignored (and everything before a lone
 * </think>, as reasoning models that open the tag in their template print);
 * an unterminated final fence runs to the end of the reply. Returns a new
 * string ending in a newline (caller frees), or NULL when there is no such
 * block: the sample's verdict is then no_code. */
char *extract_code(const char *reply, const char *lang);

#endif
