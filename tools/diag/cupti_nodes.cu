/* cupti_nodes.cu: can a CUPTI kernel record be attributed to the graph node
 * that launched it, whatever name CUPTI gives it?
 *
 * cupti_names.cu showed that CUPTI names a kernel after a kernel of an
 * unloaded module whose function handle the new one reuses. A record also
 * carries graphNodeId, the CUPTI id of the graph node that launched it.
 * This loads N modules in turn (two kernels each, of round-specific names),
 * captures a launch of each into a graph as the runner does, reads the
 * template nodes' ids (cuptiGetGraphNodeId) and functions
 * (cuGraphKernelNodeGetParams), instantiates, launches the graph twice, and
 * for every record compares its name and its node's function with what was
 * launched; then unloads the module. It also subscribes to the resource
 * callback GRAPHNODE_CLONED, to see whether records carry the template
 * node's id or the clone's. Prints the counts and the first rounds' ids.
 *
 * Build: nvcc -O2 -std=c++17 -o cupti_nodes tools/diag/cupti_nodes.cu -lcuda -lcupti
 * Run:   ./cupti_nodes 400
 */
#include "cupti_diag.h"

enum { MAXR = 64, MAXC = 1 << 16 };
static struct rec {
	char name[128];
	uint64_t node;
	uint32_t graph;
	uint32_t corr;
	int gx;
} recs[MAXR];
static int n_recs;
static struct {
	uint64_t orig, clone;
} clones[MAXC];
static int n_clones;

static void diag_keep(const CUpti_ActivityKernel9 *k)
{
	if (n_recs < MAXR) {
		struct rec *r = &recs[n_recs++];
		snprintf(r->name, sizeof r->name, "%s", k->name ? k->name : "?");
		r->node = k->graphNodeId;
		r->graph = k->graphId;
		r->corr = k->correlationId;
		r->gx = k->gridX;
	}
}

static void CUPTIAPI on_resource(void *, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	if (dom != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
		return;
	const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
	const CUpti_GraphData *gd = (const CUpti_GraphData *)rd->resourceDescriptor;
	uint64_t o = 0, c = 0;
	cuptiGetGraphNodeId(gd->originalNode, &o);
	cuptiGetGraphNodeId(gd->node, &c);
	pthread_mutex_lock(&diag_mu);
	if (n_clones < MAXC) {
		clones[n_clones].orig = o;
		clones[n_clones].clone = c;
		n_clones++;
	}
	pthread_mutex_unlock(&diag_mu);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	CUstream st;
	CUdeviceptr p;
	diag_open(&st, &p);
	CUpti_SubscriberHandle sub;
	CHECK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_resource, NULL));
	CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				  CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED));
	static char ptx[1 << 16];
	int name_bad = 0, node_bad = 0, tmpl_hits = 0, clone_hits = 0, unknown = 0, total = 0;
	for (int i = 0; i < n; i++) {
		char nm[2][64];
		snprintf(nm[0], sizeof nm[0], i % 2 ? "beta_first_%d" : "alpha_one_%d", i);
		snprintf(nm[1], sizeof nm[1], i % 2 ? "beta_second_%d" : "alpha_two_%d", i);
		int l = ptx_header(ptx, sizeof ptx);
		for (int k = 0; k < 2; k++)
			l += ptx_entry(ptx + l, sizeof ptx - (size_t)l, nm[k], i + k, 1);
		CUmodule m;
		CUfunction f[2];
		CHECK(cuModuleLoadData(&m, ptx));
		CHECK(cuModuleGetFunction(&f[0], m, nm[0]));
		CHECK(cuModuleGetFunction(&f[1], m, nm[1]));
		void *args[] = {&p};
		CUgraph g;
		CUgraphExec ge;
		CHECK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
		CHECK(cuLaunchKernel(f[0], 1, 1, 1, 32, 1, 1, 0, st, args, NULL));
		CHECK(cuLaunchKernel(f[1], 2, 1, 1, 32, 1, 1, 0, st, args, NULL));
		CHECK(cuStreamEndCapture(st, &g));
		CUgraphNode nodes[8];
		size_t nn = 8;
		CHECK(cuGraphGetNodes(g, nodes, &nn));
		uint64_t tid[8];
		int tk[8];
		for (size_t j = 0; j < nn; j++) {
			CUDA_KERNEL_NODE_PARAMS kp;
			CHECK(cuptiGetGraphNodeId(nodes[j], &tid[j]));
			CHECK(cuGraphKernelNodeGetParams(nodes[j], &kp));
			tk[j] = kp.func == f[0] ? 0 : kp.func == f[1] ? 1 : -1;
		}
		pthread_mutex_lock(&diag_mu);
		int c0 = n_clones;
		pthread_mutex_unlock(&diag_mu);
		CHECK(cuGraphInstantiate(&ge, g, 0));
		for (int rep = 0; rep < 2; rep++) {
			pthread_mutex_lock(&diag_mu);
			n_recs = 0;
			pthread_mutex_unlock(&diag_mu);
			CHECK(cuGraphLaunch(ge, st));
			CHECK(cuStreamSynchronize(st));
			cuptiActivityFlushAll(1);
			pthread_mutex_lock(&diag_mu);
			if (n_recs != 2)
				printf("round %d: %d records\n", i, n_recs);
			for (int r = 0; r < n_recs; r++) {
				total++;
				/* The launched kernel of this record, by its node id:
				 * the template's, or a clone's of a template node. */
				int k = -1, via = 0;
				for (size_t j = 0; j < nn; j++)
					if (tid[j] == recs[r].node)
						k = tk[j], via = 1;
				for (int q = c0; q < n_clones && k < 0; q++)
					if (clones[q].clone == recs[r].node)
						for (size_t j = 0; j < nn; j++)
							if (tid[j] == clones[q].orig)
								k = tk[j], via = 2;
				tmpl_hits += via == 1;
				clone_hits += via == 2;
				unknown += k < 0;
				/* The grid tells the kernel: f[0] at 1 block, f[1] at 2. */
				if (k < 0 || k != recs[r].gx - 1)
					node_bad++;
				int named = !strcmp(recs[r].name, nm[0])   ? 0
					    : !strcmp(recs[r].name, nm[1]) ? 1
									   : -1;
				if (named < 0)
					name_bad++;
				if (i < 3 || (named < 0 && name_bad <= 5))
					printf("round %d rep %d: record '%s' node %llu graph %u "
					       "corr %u -> "
					       "kernel %d (via %s); template ids %llu %llu; clones "
					       "%d\n",
					       i, rep, recs[r].name,
					       (unsigned long long)recs[r].node, recs[r].graph,
					       recs[r].corr, k,
					       via == 1	  ? "template"
					       : via == 2 ? "clone"
							  : "none",
					       (unsigned long long)tid[0],
					       (unsigned long long)tid[nn > 1], n_clones - c0);
			}
			pthread_mutex_unlock(&diag_mu);
		}
		CHECK(cuGraphExecDestroy(ge));
		CHECK(cuGraphDestroy(g));
		CHECK(cuModuleUnload(m));
	}
	printf("%d rounds, %d records: %d named wrong, %d by node unattributed; "
	       "node id of the template %d, of a clone %d, neither %d\n",
	       n, total, name_bad, node_bad, tmpl_hits, clone_hits, unknown);
	return node_bad != 0;
}
