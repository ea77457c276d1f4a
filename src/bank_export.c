/* bank_export.c: the JSONL export and its dataset card (see bank_export.h).
 * Numbers of a column always have one JSON type: shape expressions are
 * strings, shapes integers, distribution parameters and tolerances reals
 * (null where a distribution has no such parameter). */
#include "bank_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "bank_split.h"

static json_t *expr_json(const struct expr *x)
{
	return json_string(expr_text(x));
}

/* An int distribution's bound as an expression string ("V - 1", or "0" for
 * a number), so that a reader sees shape-dependent ranges; null for the float
 * kinds. */
static json_t *bound_json(const struct ka_dist *d, const struct expr *x, double v)
{
	if (d->kind != KA_DIST_INT)
		return json_null();
	if (x)
		return json_string(expr_text(x));
	char buf[32];
	snprintf(buf, sizeof buf, "%.0f", v);
	return json_string(buf);
}

static json_t *tensor_json(const struct ka_tensor_spec *s, int is_input)
{
	json_t *shape = json_array();
	for (int d = 0; d < s->ndim; d++)
		json_array_append_new(shape, expr_json(s->shape[d]));
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(s->name));
	json_object_set_new(j, "dtype", json_string(dtype_name(s->dtype)));
	json_object_set_new(j, "shape", shape);
	if (is_input) {
		static const char *const kinds[] = {"normal", "uniform", "int"};
		int normal = s->dist.kind == KA_DIST_NORMAL;
		json_t *dist = json_object();
		json_object_set_new(dist, "kind", json_string(kinds[s->dist.kind]));
		json_object_set_new(dist, "mean", normal ? json_real(s->dist.a) : json_null());
		json_object_set_new(dist, "std", normal ? json_real(s->dist.b) : json_null());
		json_object_set_new(dist, "lo",
				    normal || s->lo_x ? json_null() : json_real(s->dist.a));
		json_object_set_new(dist, "hi",
				    normal || s->hi_x ? json_null() : json_real(s->dist.b));
		json_object_set_new(dist, "lo_expr", bound_json(&s->dist, s->lo_x, s->dist.a));
		json_object_set_new(dist, "hi_expr", bound_json(&s->dist, s->hi_x, s->dist.b));
		json_object_set_new(j, "dist", dist);
	} else {
		json_object_set_new(j, "per_item", expr_json(s->per_item));
	}
	return j;
}

static json_t *shape_json(const struct ka_task *t, const struct ka_shape *sh)
{
	json_t *a = json_array();
	for (int p = 0; p < t->n_params; p++)
		json_array_append_new(a, json_integer(sh->v[p]));
	return a;
}

json_t *bank_export_record(const struct ka_task *t, const char *split)
{
	json_t *j = json_object();
	json_object_set_new(j, "schema", json_string(BANK_EXPORT_SCHEMA));
	json_object_set_new(j, "name", json_string(t->name));
	json_object_set_new(j, "tier", json_string(t->tier));
	json_object_set_new(j, "split", json_string(split));
	json_object_set_new(j, "description", json_string(t->description));
	json_object_set_new(j, "torch", json_string(t->torch));
	json_object_set_new(j, "baseline_torch",
			    json_string(t->baseline_torch ? t->baseline_torch : t->torch));
	json_t *params = json_array(), *inputs = json_array(), *outputs = json_array();
	json_t *items = json_array(), *checks = json_array(), *libs = json_array();
	for (int p = 0; p < t->n_params; p++)
		json_array_append_new(params, json_string(t->params[p]));
	for (int k = 0; k < t->n_inputs; k++)
		json_array_append_new(inputs, tensor_json(&t->inputs[k], 1));
	for (int k = 0; k < t->n_outputs; k++)
		json_array_append_new(outputs, tensor_json(&t->outputs[k], 0));
	for (int d = 0; d < t->n_item_dims; d++)
		json_array_append_new(items, expr_json(t->items[d]));
	for (int c = 0; c < t->n_checks; c++)
		json_array_append_new(checks, shape_json(t, &t->checks[c]));
	for (int l = 0; l < t->n_libs; l++)
		json_array_append_new(libs, json_string(t->libs[l]));
	json_object_set_new(j, "params", params);
	json_object_set_new(j, "inputs", inputs);
	json_object_set_new(j, "outputs", outputs);
	json_object_set_new(j, "items", items);
	json_object_set_new(j, "bench", shape_json(t, &t->bench));
	json_object_set_new(j, "checks", checks);
	json_object_set_new(j, "tolerance",
			    json_pack("{s:f,s:f}", "atol", t->atol, "rtol", t->rtol));
	json_object_set_new(j, "libraries", libs);
	json_object_set_new(j, "min_bytes", expr_json(t->min_bytes));
	json_object_set_new(j, "min_flops", expr_json(t->min_flops));
	/* The optional fields, in every record (empty where the task has none):
	 * a scalar or a constraint changes what the task computes. */
	json_t *scalars = json_array(), *cons = json_array();
	for (int i = 0; i < t->n_scalars; i++)
		json_array_append_new(scalars, json_pack("{s:s,s:f}", "name", t->scalar_names[i],
							 "value", t->scalars[i]));
	for (int i = 0; i < t->n_constraints; i++)
		json_array_append_new(cons, expr_json(t->constraints[i]));
	json_object_set_new(j, "scalars", scalars);
	json_object_set_new(j, "constraints", cons);
	json_object_set_new(j, "baseline_workspace",
			    json_string(t->baseline_ws ? expr_text(t->baseline_ws) : ""));
	json_object_set_new(j, "reference", json_string(t->ref_src));
	char hash[17];
	snprintf(hash, sizeof hash, "%016llx", (unsigned long long)task_hash(t));
	json_object_set_new(j, "task_hash", json_string(hash));
	return j;
}

static const char export_card[] =
	"---\n"
	"license: other\n"
	"pretty_name: KernelAscent task bank\n"
	"task_categories:\n"
	"- text-generation\n"
	"tags:\n"
	"- code\n"
	"- gpu-kernels\n"
	"configs:\n"
	"- config_name: default\n"
	"  data_files: tasks.jsonl\n"
	"---\n"
	"\n"
	"# KernelAscent task bank\n"
	"\n"
	"Exported by `ka bank export --format jsonl` from `%s` (%d tasks, bank hash `%s`,\n"
	"split counts: train %d, dev %d, none %d). Each line of `tasks.jsonl` is one GPU\n"
	"kernel task: what to compute (in words, as a PyTorch expression and as a single-source\n"
	"C reference), its tensors, the shapes it is checked and benchmarked on, and the\n"
	"tolerance its outputs must meet against an fp64 gold. The grader itself (inputs,\n"
	"gold, timing) is the `ka` program of KernelAscent; see docs/task-format.md there.\n"
	"\n"
	"## Fields (record schema `" BANK_EXPORT_SCHEMA "`)\n"
	"\n"
	"| field | type | meaning |\n"
	"|---|---|---|\n"
	"| `schema` | string | `" BANK_EXPORT_SCHEMA "` |\n"
	"| `name` | string | task name, unique in the bank |\n"
	"| `tier` | string | `L1` memory-bound, `L2` matmul + epilogue, `L3` attention, norms |\n"
	"| `split` | string | `train` or `dev` (from the bank's splits.json), `none` if unsplit |\n"
	"| `description` | string | what the task computes, in words |\n"
	"| `torch` | string | the equivalent PyTorch expression |\n"
	"| `baseline_torch` | string | the PyTorch form the eager and compiled baselines mirror "
	"and "
	"the calibration times: `torch` itself unless the task gives another (attention: "
	"the math written out op by op where `torch` is scaled_dot_product_attention) |\n"
	"| `params` | list of string | integer shape parameters |\n"
	"| `inputs` | list of {name, dtype, shape, dist} | inputs in argument order; `shape` is a "
	"list of "
	"expressions over the params (strings); `dist` is {kind, mean, std, lo, hi, lo_expr, "
	"hi_expr} (null where the kind has no such parameter; an `int` range's bounds as "
	"expressions over the params in `lo_expr`/`hi_expr`, with `lo`/`hi` null where a bound "
	"depends on the shape) |\n"
	"| `outputs` | list of {name, dtype, shape, per_item} | outputs; `per_item` elements per "
	"work item |\n"
	"| `items` | list of string | the work-item grid (expressions) |\n"
	"| `bench` | list of int | the benchmark shape, one value per param, in `params` order |\n"
	"| `checks` | list of list of int | the check shapes (gold computed in full) |\n"
	"| `tolerance` | {atol, rtol} | an output passes where abs(out - gold) <= atol + rtol * "
	"abs(gold) |\n"
	"| `libraries` | list of string | libraries a solution may call (cublas, cublaslt, cudnn) "
	"|\n"
	"| `min_bytes`, `min_flops` | string | roofline floor expressions |\n"
	"| `scalars` | list of {name, value} | the task's float constants (the reference's "
	"double arguments after the params), empty if none |\n"
	"| `constraints` | list of string | expressions that are 0 at every valid shape, empty if "
	"none |\n"
	"| `baseline_workspace` | string | the baselines' extra scratch bytes (expression), `\"\"` "
	"if none |\n"
	"| `reference` | string | ref.c, the single-source reference (C dialect of "
	"include/ka_ref.h) |\n"
	"| `task_hash` | string | 16 hex digits: the task's content hash in ka |\n"
	"\n"
	"## How to load\n"
	"\n"
	"```python\n"
	"import datasets\n"
	"ds = datasets.load_dataset(\"json\", data_files=\"tasks.jsonl\", split=\"train\")\n"
	"dev = ds.filter(lambda r: r[\"split\"] == \"dev\")\n"
	"```\n"
	"\n"
	"(`split=\"train\"` is the datasets library's name for the whole file; the bank's own\n"
	"split is the `split` column.)\n"
	"\n"
	"## License\n"
	"\n"
	"The tasks are part of KernelAscent and are distributed under the license of that\n"
	"repository; this card says `license: other` until the repository names one. The\n"
	"held-out tasks that score the leaderboard are never exported.\n";

int bank_export_jsonl(const char *bank_dir, const char *out_dir, int *n_tasks, struct ka_err *e)
{
	struct bank_list l = {0};
	struct bank_split s = {0};
	struct util_buf lines = {0}, card = {0};
	char *path = NULL;
	int rc = -1, counts[3] = {0, 0, 0};
	char hash[17];
	if (bank_scan(bank_dir, &l, e) || bank_content_hash_hex(bank_dir, hash, NULL, e))
		goto done;
	if (bank_split_read(bank_dir, &s, e) < 0)
		goto done;
	for (int i = 0; i < l.n; i++) {
		struct ka_task *t = task_load(l.dirs[i], e);
		if (!t)
			goto done;
		enum bank_split_kind k = bank_split_of(&s, t->name);
		counts[k == BANK_SPLIT_TRAIN ? 0 : k == BANK_SPLIT_DEV ? 1 : 2]++;
		json_t *rec = bank_export_record(t, bank_split_name(k));
		char *line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER |
						     JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
		json_decref(rec);
		task_free(t);
		util_buf_printf(&lines, "%s\n", line);
		free(line);
	}
	util_buf_printf(&card, export_card, bank_dir, l.n, hash, counts[0], counts[1], counts[2]);
	if (lines.over || card.over) {
		ka_err_set(e, "%s: export larger than %zu bytes", bank_dir, lines.max);
		goto done;
	}
	if (util_mkdirs(out_dir, e))
		goto done;
	path = xasprintf("%s/tasks.jsonl", out_dir);
	if (util_write_file(path, lines.s ? lines.s : "", lines.len, e))
		goto done;
	free(path);
	path = xasprintf("%s/README.md", out_dir);
	if (util_write_file(path, card.s, card.len, e))
		goto done;
	*n_tasks = l.n;
	rc = 0;
done:
	free(path);
	util_buf_free(&lines);
	util_buf_free(&card);
	bank_split_free(&s);
	bank_list_free(&l);
	return rc;
}
