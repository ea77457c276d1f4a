/* test_extract.c: code extraction from model replies, as a table of replies
 * with the literal code expected (NULL: no_code). */
#include <stdlib.h>

#include "extract.h"
#include "ka_test.h"

struct ex_case {
	const char *name, *reply, *lang, *want;
};

static const struct ex_case cases[] = {
	{"plain cuda", "Here:\n```cuda\n__global__ void k() {}\n```\nDone.", "cuda",
	 "__global__ void k() {}\n"},
	{"last of two", "```cuda\nv1\n```\nbetter:\n```cuda\nv2\n```\n", "cuda", "v2\n"},
	{"untagged", "Sure.\n```\nint x;\n```\n", "cuda", "int x;\n"},
	{"tagged beats later untagged", "```cu\nkernel\n```\nrun it:\n```\nnvcc k.cu\n```\n",
	 "cuda", "kernel\n"},
	{"other language skipped", "```cuda\nkernel\n```\n```bash\nnvcc -O3 k.cu\n```\n", "cuda",
	 "kernel\n"},
	{"only other language", "```python\nprint(1)\n```\n", "cuda", NULL},
	{"cpp accepted for cuda", "```cpp\n#include <cuda_runtime.h>\n```", "cuda",
	 "#include <cuda_runtime.h>\n"},
	{"own tag beats relative", "```cuda\nA\n```\n```cpp\nB\n```\n", "cuda", "A\n"},
	{"opencl as c", "```c\n__kernel void k() {}\n```\n", "opencl", "__kernel void k() {}\n"},
	{"opencl tag", "```opencl\nX\n```\n", "opencl", "X\n"},
	{"uppercase tag and attrs", "```CUDA title=\"k.cu\"\nY\n```\n", "cuda", "Y\n"},
	{"no fence", "I cannot write this kernel.", "cuda", NULL},
	{"empty reply", "", "cuda", NULL},
	{"unterminated final fence", "Code:\n```cuda\nint a;\nint b;", "cuda", "int a;\nint b;\n"},
	{"think ignored", "<think>\n```cuda\ndraft\n```\n</think>\nFinal:\n```cuda\nfinal\n```\n",
	 "cuda", "final\n"},
	{"think only", "<think>\n```cuda\ndraft\n```\n</think>\nno code, sorry", "cuda", NULL},
	{"lone close tag", "reasoning ```cuda\ndraft\n```\n</think>\n```cuda\nreal\n```", "cuda",
	 "real\n"},
	{"unterminated think", "```cuda\nearly\n```\n<think>\n```cuda\nlate\n```", "cuda",
	 "early\n"},
	{"tilde fence", "~~~cuda\nT\n~~~\n", "cuda", "T\n"},
	{"longer fence holds backticks", "````cuda\nA\n```\nB\n````\n", "cuda", "A\n```\nB\n"},
	{"indented fence", "  ```cuda\n  x\n  ```\n", "cuda", "  x\n"},
	{"crlf", "```cuda\r\nint z;\r\n```\r\n", "cuda", "int z;\n"},
	{"any language", "```python\np\n```\n", NULL, "p\n"},
	{"inline backticks are not fences", "use ``` carefully\n", "cuda", NULL},
};

static void test_extract_table(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = extract_code(cases[i].reply, cases[i].lang);
		int ok = (!got && !cases[i].want) ||
			 (got && cases[i].want && !strcmp(got, cases[i].want));
		if (!ok)
			printf("# case '%s': got [%s]\n", cases[i].name, got ? got : "(null)");
		free(got);
		CHECK(ok);
	}
}

int main(void)
{
	RUN(test_extract_table);
	TEST_EXIT();
}
