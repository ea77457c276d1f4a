// tools/cuda_emu/driver.cpp: main() of an emulated baseline (docs/cuda-emu.md).
// Usage: BINARY MANIFEST. The manifest (written by tools/cuda_emu/run.py)
// names the call's parameters, the inputs (.npy files from `ka gold
// --inputs`), the outputs with their fp64 gold (.npy from `ka gold`), the
// tolerance and the workspace. The driver places every tensor in emulated
// device memory, calls ka_launch the way the runner calls a trusted
// baseline (pointers, dtypes and element counts only, no scalars) or the
// way a candidate is called (names, shapes, scalars: mode solution), and
// checks every output element against the gold with the grader's rule
// (src/common/cmp.h), the inputs unchanged and the canaries intact.
// Prints one line per output and "RESULT pass|fail maxfrac=F" (F: the
// largest |out - gold| / (atol + rtol |gold|)); exit 0 pass, 1 fail, 2 bad
// usage or input, 3 crash.
#include "cmp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "emu_rt.h"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream);

namespace
{

struct npy {
	std::string descr;
	std::vector<int64_t> shape;
	std::vector<unsigned char> data;
	int64_t numel() const
	{
		int64_t n = 1;
		for (int64_t d : shape)
			n *= d;
		return n;
	}
};

[[noreturn]] void bad(const char *what, const std::string &s)
{
	fprintf(stderr, "emu: %s: %s\nRESULT error\n", what, s.c_str());
	exit(2);
}

// A version 1-3 .npy file, C order.
npy read_npy(const std::string &path)
{
	FILE *f = fopen(path.c_str(), "rb");
	if (!f)
		bad("cannot open", path);
	unsigned char h[12];
	if (fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6))
		bad("not a .npy file", path);
	size_t hl = h[8] | (size_t)h[9] << 8;
	if (h[6] >= 2) {
		if (fread(h + 10, 1, 2, f) != 2)
			bad("short .npy header", path);
		hl |= (size_t)h[10] << 16 | (size_t)h[11] << 24;
	}
	std::string hdr(hl, '\0');
	if (fread(&hdr[0], 1, hl, f) != hl)
		bad("short .npy header", path);
	npy r;
	size_t d = hdr.find("'descr':"), s = hdr.find("'shape':");
	if (d == std::string::npos || s == std::string::npos ||
	    hdr.find("'fortran_order': True") != std::string::npos)
		bad("a .npy header without descr and shape, or in Fortran order", path);
	size_t q1 = hdr.find('\'', d + 8), q2 = hdr.find('\'', q1 + 1);
	r.descr = hdr.substr(q1 + 1, q2 - q1 - 1);
	size_t p = hdr.find('(', s), e = hdr.find(')', p);
	for (const char *c = hdr.c_str() + p + 1; c < hdr.c_str() + e;) {
		char *end;
		long long v = strtoll(c, &end, 10);
		if (end == c) {
			c++;
			continue;
		}
		r.shape.push_back(v);
		c = end;
	}
	size_t item = (size_t)atoi(r.descr.c_str() + 2);
	size_t bytes = (size_t)r.numel() * item;
	r.data.resize(bytes);
	if (bytes && fread(r.data.data(), 1, bytes, f) != bytes)
		bad("short .npy data", path);
	fclose(f);
	return r;
}

struct dtype_info {
	const char *name;
	int code;
	size_t size;
};
const dtype_info DTYPES[] = {{"fp32", KA_FP32, 4}, {"fp16", KA_FP16, 2},   {"bf16", KA_BF16, 2},
			     {"fp64", KA_FP64, 8}, {"int32", KA_INT32, 4}, {"int64", KA_INT64, 8},
			     {"bool", KA_BOOL, 1}, {"int8", KA_INT8, 1},   {"uint8", KA_UINT8, 1}};

const dtype_info &dtype_of(const std::string &n)
{
	for (const dtype_info &d : DTYPES)
		if (n == d.name)
			return d;
	bad("unknown dtype", n);
}

struct tensor {
	std::string name;
	const dtype_info *dt;
	npy file; // the input, or the output's gold
	void *dev;
	std::vector<unsigned char> copy; // an input's bytes before the call
};

struct manifest {
	bool solution = false;
	double atol = 0, rtol = 0;
	size_t workspace = 0;
	int calls = 1;
	std::vector<std::string> pnames, snames;
	std::vector<int64_t> params;
	std::vector<double> scalars;
	std::vector<tensor> in, out;
};

manifest read_manifest(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		bad("cannot open", path);
	manifest m;
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		char k[32], a[1024], b[1024], c[2048];
		int n = sscanf(line, "%31s %1023s %1023s %2047s", k, a, b, c);
		if (n <= 0)
			continue;
		std::string key = k;
		if (key == "mode" && n == 2)
			m.solution = !strcmp(a, "solution");
		else if (key == "tolerance" && n == 3)
			m.atol = strtod(a, NULL), m.rtol = strtod(b, NULL);
		else if (key == "workspace" && n == 2)
			m.workspace = (size_t)strtoull(a, NULL, 10);
		else if (key == "calls" && n == 2)
			m.calls = atoi(a);
		else if (key == "param" && n == 3)
			m.pnames.push_back(a), m.params.push_back(strtoll(b, NULL, 10));
		else if (key == "scalar" && n == 3)
			m.snames.push_back(a), m.scalars.push_back(strtod(b, NULL));
		else if ((key == "input" || key == "output") && n == 4)
			(key == "input" ? m.in : m.out)
				.push_back(tensor{a, &dtype_of(b), read_npy(c), NULL, {}});
		else
			bad("a manifest line it does not know", line);
	}
	fclose(f);
	return m;
}

void fill_tensor(ka_tensor &t, const tensor &x, bool full)
{
	memset(&t, 0, sizeof t);
	t.ptr = x.dev;
	t.dtype = x.dt->code;
	t.numel = x.file.numel();
	if (full) { // a candidate's call also names the tensor and its shape
		t.name = x.name.c_str();
		t.ndim = (int32_t)x.file.shape.size();
		for (size_t i = 0; i < x.file.shape.size() && i < KA_MAX_DIMS; i++)
			t.shape[i] = x.file.shape[i];
	}
}

// Compares output x (its device bytes) with its gold; prints one line and
// returns the largest error as a fraction of the bound (inf: a mismatch of
// an exact dtype or a non-finite value), *bad the elements outside it.
double compare(const tensor &x, double atol, double rtol, long long *nbad)
{
	int64_t n = x.file.numel();
	std::vector<double> gold((size_t)n);
	memcpy(gold.data(), x.file.data.data(), gold.size() * sizeof(double));
	bool exact = ka_cmp_is_int(x.dt->code);
	if (exact)
		atol = rtol = 0;
	double worst = 0;
	int64_t at = -1;
	*nbad = 0;
	for (int64_t i = 0; i < n; i++) {
		double v = ka_cmp_value((const unsigned char *)x.dev + (size_t)i * x.dt->size,
					x.dt->code);
		int how = ka_cmp_elem(v, gold[i], atol, rtol);
		double bound = atol + rtol * fabs(gold[i]), err = fabs(v - gold[i]);
		double frac = how == KA_CMP_NONFINITE ? INFINITY
			      : err == 0	      ? 0
			      : bound > 0	      ? err / bound
						      : INFINITY;
		if (how != KA_CMP_OK) {
			(*nbad)++;
			if (!(frac > 1))
				frac = INFINITY; // a NaN gold
		}
		if (at < 0 || frac > worst)
			worst = frac, at = i;
	}
	if (n == 0) {
		printf("output %s: no elements\n", x.name.c_str());
		return 0;
	}
	double got =
		ka_cmp_value((const unsigned char *)x.dev + (size_t)at * x.dt->size, x.dt->code);
	printf("output %s: %lld elements, %lld outside the tolerance, max err/tol %.4g at [%lld] "
	       "(got %.9g, gold "
	       "%.9g)\n",
	       x.name.c_str(), (long long)n, *nbad, worst, (long long)at, got, gold[at]);
	return worst;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s MANIFEST\n", argv[0]);
		return 2;
	}
	ka_emu::configure_from_env();
	ka_emu::install_crash_handler();
	manifest m = read_manifest(argv[1]);
	for (tensor &t : m.in) {
		if (t.file.data.size() != (size_t)t.file.numel() * t.dt->size)
			bad("an input's .npy element size differs from its dtype", t.name);
		t.dev = ka_emu::device_alloc(t.file.data.size(), ("input " + t.name).c_str(), 0);
		memcpy(t.dev, t.file.data.data(), t.file.data.size());
		t.copy = t.file.data;
	}
	for (tensor &t : m.out) {
		if (t.file.descr != "<f8")
			bad("a gold .npy that is not float64", t.name);
		t.dev = ka_emu::device_alloc((size_t)t.file.numel() * t.dt->size,
					     ("output " + t.name).c_str(), ka_emu::poison_byte());
	}
	std::vector<ka_tensor> ti(m.in.size()), to(m.out.size());
	for (size_t i = 0; i < m.in.size(); i++)
		fill_tensor(ti[i], m.in[i], m.solution);
	for (size_t i = 0; i < m.out.size(); i++)
		fill_tensor(to[i], m.out[i], m.solution);
	std::vector<const char *> pn, sn;
	for (const std::string &s : m.pnames)
		pn.push_back(s.c_str());
	for (const std::string &s : m.snames)
		sn.push_back(s.c_str());
	ka_args a;
	memset(&a, 0, sizeof a);
	a.n_params = (int32_t)m.params.size();
	a.params = m.params.data();
	a.n_inputs = (int32_t)ti.size();
	a.inputs = ti.data();
	a.n_outputs = (int32_t)to.size();
	a.outputs = to.data();
	if (m.solution) {
		a.param_names = pn.data();
		a.n_scalars = (int32_t)m.scalars.size();
		a.scalar_names = sn.data();
		a.scalars = m.scalars.data();
	}
	cudaStream_t stream = (cudaStream_t)(uintptr_t)0x5eed00;
	ka_emu::set_call_stream(stream);
	ka_emu::workspace_policy(m.solution, m.workspace);
	bool ok = true;
	double worst = 0;
	for (int call = 0; call < m.calls; call++) {
		ka_emu::workspace_reset();
		for (tensor &t : m.out)
			memset(t.dev, ka_emu::poison_byte(), (size_t)t.file.numel() * t.dt->size);
		int rc = ka_launch(&a, stream);
		cudaError_t last = cudaGetLastError();
		if (rc != 0 || last != cudaSuccess) {
			printf("ka_launch returned %d, cudaGetLastError after it: %s\n", rc,
			       cudaGetErrorString(last));
			ok = false;
		}
		for (tensor &t : m.in)
			if (memcmp(t.dev, t.copy.data(), t.copy.size())) {
				ka_emu::error("input %s changed", t.name.c_str());
				ok = false;
			}
		if (ka_emu::check_canaries())
			ok = false;
		for (tensor &t : m.out) {
			long long nb;
			double w = compare(t, m.atol, m.rtol, &nb);
			worst = w > worst ? w : worst;
			ok = ok && nb == 0;
		}
	}
	if (ka_emu::error_count())
		ok = false;
	ka_emu::print_errors(stdout);
	const ka_emu::stats_t &s = ka_emu::stats;
	printf("emu: %lld launches, %lld blocks, %lld threads, %lld switches, %lld cuBLAS calls, "
	       "%lld shuffle reads "
	       "of lanes outside the call\n",
	       s.launches, s.blocks, s.threads, s.switches, s.blas_calls, s.undefined_lane_reads);
	printf("RESULT %s maxfrac=%.4g\n", ok ? "pass" : "fail", worst);
	fflush(stdout);
	return ok ? 0 : 1;
}
