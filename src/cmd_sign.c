/* cmd_sign.c: `ka keygen`, `ka sign` and `ka verify-signature`, the command
 * line of signed scorecards (sign.h, docs/scaleout.md). A signature is a
 * detached block SCORECARD.sig; the scorecard file is never rewritten. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sign.h"
#include "util.h"

int cmd_keygen(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, 0, 'o'},
					     {"name", required_argument, 0, 'n'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	const char *out = NULL, *name = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': name = optarg; break;
		case 'h':
			puts("usage: ka keygen -o PREFIX [--name NAME]\n\n"
			     "Makes an ed25519 key pair: PREFIX.key (PKCS#8 PEM, mode 0600; kept\n"
			     "secret) and PREFIX.pub, one line \"ed25519 HEX NAME\" (a line of a\n"
			     "trusted-key list). An existing PREFIX.key is never overwritten.\n\n"
			     "exit codes: 0 written, 1 failed, 2 bad usage.");
			return KA_EXIT_OK;
		default: return cli_bad_option("keygen", c, argv);
		}
	}
	if (!out)
		return cli_usage_error("keygen", "missing -o PREFIX");
	if (optind < argc)
		return cli_usage_error("keygen", "unexpected argument '%s'", argv[optind]);
	if (name && (strchr(name, '\n') || strlen(name) > 60))
		return cli_usage_error("keygen", "--name: one line of at most 60 bytes");
	char *priv = xasprintf("%s.key", out), *pub = xasprintf("%s.pub", out);
	char hex[SIGN_PUB_HEX];
	struct ka_err e;
	int rc = sign_keygen(priv, pub, name, hex, &e);
	if (rc)
		rc = cli_fail("keygen", "%s", e.msg);
	else
		printf("%s: private key (keep it secret)\n%s: ed25519 %s\n", priv, pub, hex);
	free(priv);
	free(pub);
	return rc;
}

int cmd_sign(int argc, char **argv)
{
	static const struct option opts[] = {{"key", required_argument, 0, 'k'},
					     {"out", required_argument, 0, 'o'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	const char *key = NULL, *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'o': out = optarg; break;
		case 'h':
			puts("usage: ka sign SCORECARD --key PREFIX.key [-o SIG]\n\n"
			     "Writes the signature block of SCORECARD to SIG (default\n"
			     "SCORECARD.sig): the SHA-256 of the canonical scorecard and of each\n"
			     "top-level field, signed with the ed25519 key. The scorecard is not\n"
			     "changed. Check with ka verify-signature.\n\n"
			     "exit codes: 0 signed, 1 failed, 2 bad usage or input.");
			return KA_EXIT_OK;
		default: return cli_bad_option("sign", c, argv);
		}
	}
	if (!key)
		return cli_usage_error("sign", "missing --key PREFIX.key");
	if (optind != argc - 1)
		return cli_usage_error("sign", "one SCORECARD is needed");
	const char *sc_path = argv[optind];
	if (cli_check_input("sign", sc_path, 0) || cli_check_input("sign", key, 0))
		return KA_EXIT_USAGE;
	struct ka_err e;
	char *text = NULL, *sig_path = out ? xstrdup(out) : xasprintf("%s.sig", sc_path);
	char *dump = NULL;
	json_t *block = NULL;
	int rc = KA_EXIT_USAGE;
	if (util_read_file(sc_path, SIGN_FILE_CAP * 64, &text, NULL, &e)) {
		cli_bad_input("sign", "%s", e.msg);
		goto out;
	}
	block = sign_make(text, key, &e);
	if (!block) {
		cli_bad_input("sign", "%s: %s", sc_path, e.msg);
		goto out;
	}
	dump = json_dumps(block, JSON_INDENT(2) | JSON_SORT_KEYS);
	size_t n = strlen(dump);
	dump = xrealloc(dump, n + 2);
	memcpy(dump + n, "\n", 2);
	if (util_write_file(sig_path, dump, n + 1, &e)) {
		rc = cli_fail("sign", "%s", e.msg);
		goto out;
	}
	printf("%s: signed by ed25519 %s\n", sig_path,
	       json_string_value(json_object_get(block, "public_key")));
	rc = KA_EXIT_OK;
out:
	free(text);
	free(sig_path);
	free(dump);
	json_decref(block);
	return rc;
}

int cmd_verify_signature(int argc, char **argv)
{
	static const struct option opts[] = {{"sig", required_argument, 0, 's'},
					     {"trusted", required_argument, 0, 't'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	const char *sig = NULL, *trusted = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': sig = optarg; break;
		case 't': trusted = optarg; break;
		case 'h':
			puts("usage: ka verify-signature SCORECARD [--sig SIG] [--trusted KEYS]\n\n"
			     "Checks the signature block SIG (default SCORECARD.sig): its ed25519\n"
			     "signature, then the hash of every top-level field of SCORECARD. A\n"
			     "scorecard edited after signing is rejected naming the field that\n"
			     "changed. With --trusted (lines \"ed25519 HEX [name]\", as ka keygen\n"
			     "writes them) the signer must be in the list.\n\n"
			     "exit codes: 0 valid, 2 rejected or bad usage.");
			return KA_EXIT_OK;
		default: return cli_bad_option("verify-signature", c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("verify-signature", "one SCORECARD is needed");
	const char *sc_path = argv[optind];
	if (cli_check_input("verify-signature", sc_path, 0))
		return KA_EXIT_USAGE;
	struct ka_err e;
	struct sign_keys *keys = NULL;
	int rc = KA_EXIT_USAGE;
	if (trusted) {
		keys = xcalloc(1, sizeof *keys);
		if (sign_keys_load(trusted, keys, &e)) {
			cli_bad_input("verify-signature", "%s", e.msg);
			goto out;
		}
	}
	char hex[SIGN_PUB_HEX];
	if (sign_verify_file(sc_path, sig, keys, hex, &e)) {
		cli_bad_input("verify-signature", "%s: rejected: %s", sc_path, e.msg);
		goto out;
	}
	int at = keys ? sign_keys_find(keys, hex) : -1;
	if (at >= 0 && keys->name[at][0])
		printf("%s: signature ok, ed25519 %s (trusted: %s)\n", sc_path, hex,
		       keys->name[at]);
	else
		printf("%s: signature ok, ed25519 %s%s\n", sc_path, hex,
		       at >= 0 ? " (trusted)" : "");
	rc = KA_EXIT_OK;
out:
	free(keys);
	return rc;
}
