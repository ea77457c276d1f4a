/* model_bedrock.c: the AWS Bedrock Runtime Converse backend: spec
 * bedrock:<model-id>[@<region>]. Requests are signed with our own SigV4
 * signer (sigv4.c). Credentials, in the AWS SDK's order: the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), then the
 * profile AWS_PROFILE (or "default") in the shared credentials file
 * (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials) and the config file
 * (AWS_CONFIG_FILE, ~/.aws/config), static keys or credential_process. SSO,
 * role assumption and instance metadata are not supported. KA_BEDROCK_ENDPOINT
 * replaces https://bedrock-runtime.<region>.amazonaws.com (tests, VPC
 * endpoints). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_backend.h"
#include "sigv4.h"

#define AWS_FILE_CAP (1 << 20)
#define AWS_PROCESS_CAP (64 << 10)
#define AWS_PROCESS_TIMEOUT_S 60

struct bedrock {
	char *model_id;
	char *region;
	char *endpoint; /* scheme://authority, no trailing slash */
	char *host;	/* authority as sent in Host */
	char *path;	/* /model/<encoded id>/converse */
	char *access_key, *secret_key, *token;
	char *process;	  /* credential_process command, or NULL */
	time_t expires;	  /* 0: never */
	char source[160]; /* where the credentials came from, for messages */
};

/* Value of key in section of an INI file (AWS style); NULL if absent. Caller
 * frees. */
static char *ini_get(const char *text, const char *section, const char *key)
{
	char *result = NULL;
	int in = 0;
	const char *p = text;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[4096];
		if (n >= sizeof line)
			n = sizeof line - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = eol ? eol + 1 : NULL;
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		char *end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = 0;
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (!close)
				continue;
			*close = 0;
			char *name = s + 1;
			while (isspace((unsigned char)*name))
				name++;
			char *ne = name + strlen(name);
			while (ne > name && isspace((unsigned char)ne[-1]))
				*--ne = 0;
			in = !strcmp(name, section);
			continue;
		}
		if (!in)
			continue;
		char *eq = strchr(s, '=');
		if (!eq)
			continue;
		char *k = s, *ke = eq;
		while (ke > k && isspace((unsigned char)ke[-1]))
			ke--;
		*ke = 0;
		char *v = eq + 1;
		while (isspace((unsigned char)*v))
			v++;
		if (!strcmp(k, key)) {
			free(result);
			result = xstrdup(v);
		}
	}
	return result;
}

static char *read_aws_file(const char *env, const char *home_rel)
{
	const char *path = getenv(env);
	char *owned = NULL;
	if (!path || !*path) {
		const char *home = getenv("HOME");
		if (!home)
			return NULL;
		owned = xasprintf("%s/%s", home, home_rel);
		path = owned;
	}
	char *text = NULL;
	if (util_read_file(path, AWS_FILE_CAP, &text, NULL, NULL) != 0)
		text = NULL;
	free(owned);
	return text;
}

static time_t parse_iso8601(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!end)
		return 0;
	return timegm(&tm);
}

/* Run credential_process and take its JSON: 0 or -1 with e set. */
static int run_process(struct bedrock *b, struct ka_err *e)
{
	char *out = NULL, errline[200] = "";
	size_t len = 0;
	int rc = model_shell(b->process, "", 0, NULL, AWS_PROCESS_TIMEOUT_S, AWS_PROCESS_CAP, &out,
			     &len, errline, sizeof errline);
	if (rc != 0) {
		free(out);
		if (rc == 124)
			return ka_err_set(e, "bedrock: credential_process timed out after %d s",
					  AWS_PROCESS_TIMEOUT_S);
		return ka_err_set(e, "bedrock: credential_process '%s' failed (status %d): %s",
				  b->process, rc, errline[0] ? errline : "no message");
	}
	json_t *root = json_loadb(out, len, 0, NULL);
	free(out);
	const char *ak = json_string_value(json_object_get(root, "AccessKeyId"));
	const char *sk = json_string_value(json_object_get(root, "SecretAccessKey"));
	const char *tk = json_string_value(json_object_get(root, "SessionToken"));
	const char *ex = json_string_value(json_object_get(root, "Expiration"));
	if (!ak || !sk) {
		json_decref(root);
		return ka_err_set(e, "bedrock: credential_process output has no AccessKeyId and "
				     "SecretAccessKey");
	}
	free(b->access_key);
	free(b->secret_key);
	free(b->token);
	b->access_key = xstrdup(ak);
	b->secret_key = xstrdup(sk);
	b->token = tk && *tk ? xstrdup(tk) : NULL;
	b->expires = ex ? parse_iso8601(ex) : 0;
	json_decref(root);
	return 0;
}

static int load_credentials(struct bedrock *b, char **profile_region, struct ka_err *e)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *profile = model_env("AWS_PROFILE", "AWS_DEFAULT_PROFILE");
	char *creds = read_aws_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
	char *config = read_aws_file("AWS_CONFIG_FILE", ".aws/config");
	const char *prof = profile ? profile : "default";
	char *cfg_section =
		!strcmp(prof, "default") ? xstrdup("default") : xasprintf("profile %s", prof);
	int rc = -1;
	if (config)
		*profile_region = ini_get(config, cfg_section, "region");
	if (ak && *ak && sk && *sk) {
		b->access_key = xstrdup(ak);
		b->secret_key = xstrdup(sk);
		const char *tk = getenv("AWS_SESSION_TOKEN");
		b->token = tk && *tk ? xstrdup(tk) : NULL;
		snprintf(b->source, sizeof b->source, "AWS_ACCESS_KEY_ID");
		rc = 0;
		goto done;
	}
	/* Static keys: credentials file first, then the config file. */
	for (int pass = 0; pass < 2; pass++) {
		const char *text = pass == 0 ? creds : config;
		const char *sec = pass == 0 ? prof : cfg_section;
		if (!text)
			continue;
		char *k = ini_get(text, sec, "aws_access_key_id");
		char *s = ini_get(text, sec, "aws_secret_access_key");
		if (k && s && *k && *s) {
			b->access_key = k;
			b->secret_key = s;
			b->token = ini_get(text, sec, "aws_session_token");
			snprintf(b->source, sizeof b->source, "profile '%s' (%s)", prof,
				 pass == 0 ? "credentials file" : "config file");
			rc = 0;
			goto done;
		}
		free(k);
		free(s);
	}
	for (int pass = 0; pass < 2; pass++) {
		const char *text = pass == 0 ? creds : config;
		const char *sec = pass == 0 ? prof : cfg_section;
		char *proc = text ? ini_get(text, sec, "credential_process") : NULL;
		if (proc && *proc) {
			b->process = proc;
			snprintf(b->source, sizeof b->source, "credential_process of profile '%s'",
				 prof);
			rc = run_process(b, e);
			goto done;
		}
		free(proc);
	}
	if (profile && !(creds && strstr(creds, prof)) && !(config && strstr(config, prof)))
		ka_err_set(e,
			   "bedrock: AWS profile '%s' not found in the credentials or config file",
			   prof);
	else
		ka_err_set(e,
			   "bedrock: no AWS credentials (set AWS_ACCESS_KEY_ID and "
			   "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with keys or credential_process "
			   "in ~/.aws/credentials or ~/.aws/config)");
done:
	free(cfg_section);
	free(creds);
	free(config);
	return rc;
}

static int bedrock_open(struct model *m, const char *arg, struct ka_err *e)
{
	struct bedrock *b = xcalloc(1, sizeof *b);
	m->impl = b;
	/* The region follows the last '@'; model IDs and ARNs never hold one. */
	const char *at = strrchr(arg, '@');
	size_t idlen = at ? (size_t)(at - arg) : strlen(arg);
	if (idlen == 0)
		return ka_err_set(e, "bedrock: missing model ID (bedrock:<model-id>[@<region>])");
	b->model_id = xmalloc(idlen + 1);
	memcpy(b->model_id, arg, idlen);
	b->model_id[idlen] = 0;
	m->price_name = xstrdup(b->model_id);
	if (at) {
		const char *r = at + 1;
		if (!*r)
			return ka_err_set(e, "bedrock: empty region after '@'");
		for (const char *c = r; *c; c++)
			if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) ||
			      *c == '-'))
				return ka_err_set(e, "bedrock: region '%s' is not like us-east-1",
						  r);
		b->region = xstrdup(r);
	}
	char *profile_region = NULL;
	if (load_credentials(b, &profile_region, e) != 0) {
		free(profile_region);
		return -1;
	}
	if (!b->region) {
		const char *env = model_env("AWS_REGION", "AWS_DEFAULT_REGION");
		b->region = xstrdup(env ? env : profile_region ? profile_region : "us-east-1");
	}
	free(profile_region);
	const char *ep = model_env("KA_BEDROCK_ENDPOINT", NULL);
	b->endpoint =
		ep ? xstrdup(ep) : xasprintf("https://bedrock-runtime.%s.amazonaws.com", b->region);
	size_t el = strlen(b->endpoint);
	while (el > 0 && b->endpoint[el - 1] == '/')
		b->endpoint[--el] = 0;
	const char *auth = strstr(b->endpoint, "://");
	if (!auth || (strncmp(b->endpoint, "http://", 7) && strncmp(b->endpoint, "https://", 8)))
		return ka_err_set(e, "bedrock: endpoint '%s' must start with http:// or https://",
				  b->endpoint);
	auth += 3;
	const char *slash = strchr(auth, '/');
	if (slash)
		return ka_err_set(e, "bedrock: endpoint '%s' must not have a path", b->endpoint);
	const char *userinfo = strchr(auth, '@');
	b->host = xstrdup(userinfo ? userinfo + 1 : auth);
	char *enc = sigv4_uri_encode(b->model_id, 0);
	b->path = xasprintf("/model/%s/converse", enc);
	free(enc);
	return 0;
}

static int bedrock_build(struct model *m, const struct model_request *r, int64_t seed,
			 struct model_http *h, struct ka_err *e)
{
	struct bedrock *b = m->impl;
	time_t now = time(NULL);
	if (b->process && b->expires && now > b->expires - 300 && run_process(b, e) != 0)
		return -1;
	json_t *content = json_pack("[{s:s}]", "text", r->prompt ? r->prompt : "");
	json_t *cfg = json_pack("{s:i, s:f}", "maxTokens", m->p.max_tokens, "temperature",
				m->p.temperature);
	if (m->p.top_p < 1.0)
		json_object_set_new(cfg, "topP", json_real(m->p.top_p));
	json_t *body = json_pack("{s:[{s:s, s:o}], s:o}", "messages", "role", "user", "content",
				 content, "inferenceConfig", cfg);
	if (!body)
		return ka_err_set(e, "bedrock: the prompt is not valid UTF-8");
	if (r->system && *r->system &&
	    json_object_set_new(body, "system", json_pack("[{s:s}]", "text", r->system)) != 0) {
		json_decref(body);
		return ka_err_set(e, "bedrock: the system prompt is not valid UTF-8");
	}
	model_http_body(h, body);

	char date[17];
	sigv4_amz_date(now, date);
	struct sigv4_header hs[4] = {{"content-type", "application/json"},
				     {"host", b->host},
				     {"x-amz-date", date},
				     {"x-amz-security-token", b->token}};
	struct sigv4_input in = {
		.method = "POST",
		.path = b->path,
		.query = NULL,
		.headers = hs,
		.n_headers = b->token ? 4 : 3,
		.body = h->body,
		.body_len = h->body_len,
		.region = b->region,
		.service = "bedrock",
		.amz_date = date,
		.access_key = b->access_key,
		.secret_key = b->secret_key,
	};
	struct sigv4_output out;
	if (sigv4_sign(&in, &out, e) != 0)
		return -1;
	h->url = xasprintf("%s%s", b->endpoint, b->path);
	model_header(&h->headers, "Content-Type", "application/json");
	model_header(&h->headers, "Host", b->host);
	model_header(&h->headers, "X-Amz-Date", date);
	if (b->token)
		model_header(&h->headers, "X-Amz-Security-Token", b->token);
	model_header(&h->headers, "Authorization", out.authorization);
	model_header(&h->headers, "Accept", "application/json");
	sigv4_output_free(&out);
	return 0;
}

static int bedrock_parse(struct model *m, json_t *root, struct model_reply *rep)
{
	json_t *content = json_object_get(
		json_object_get(json_object_get(root, "output"), "message"), "content");
	if (!json_is_array(content))
		return model_fail(rep, "bedrock", "reply has no output.message.content"), -1;
	rep->text = model_join_text(content, 0); /* reasoningContent, toolUse carry no text */
	json_t *usage = json_object_get(root, "usage");
	rep->in_tokens = json_integer_value(json_object_get(usage, "inputTokens"));
	rep->out_tokens = json_integer_value(json_object_get(usage, "outputTokens"));
	const char *fin = json_string_value(json_object_get(root, "stopReason"));
	snprintf(rep->finish, sizeof rep->finish, "%s", fin ? fin : "");
	return 0;
}

static void bedrock_close(struct model *m)
{
	struct bedrock *b = m->impl;
	free(b->model_id);
	free(b->region);
	free(b->endpoint);
	free(b->host);
	free(b->path);
	if (b->secret_key)
		memset(b->secret_key, 0, strlen(b->secret_key));
	free(b->access_key);
	free(b->secret_key);
	free(b->token);
	free(b->process);
	free(b);
}

const struct model_backend model_bedrock_backend = {
	.name = "bedrock",
	.http = 1,
	.cacheable = 1,
	.open = bedrock_open,
	.build = bedrock_build,
	.parse = bedrock_parse,
	.close = bedrock_close,
};
