#!/usr/bin/env bash
# model_cli.sh: `ka model test` end to end against tools/fakeserver.py on
# loopback: each backend's happy path, the printed summary, --json, and the
# exit codes of bad specs, bad flags and unreachable servers.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY KA_ANTHROPIC_API_KEY \
	KA_PRICES AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
	AWS_REGION AWS_DEFAULT_REGION AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE KA_BEDROCK_ENDPOINT
export HOME=$tmp

# check NAME WANT_RC WANT_TEXT -- command...: runs it, stdout+stderr into
# $tmp/out; PASS when the exit code and a fixed-string match both hold.
check() {
	local name=$1 want_rc=$2 want=$3; shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	cat "$tmp/err" >>"$tmp/out"
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit $rc, want $want_rc: $(head -c 300 "$tmp/out" | tr '\n' ' ')"
	elif ! grep -qF -- "$want" "$tmp/out"; then
		echo "FAIL $name: output lacks '$want': $(head -c 300 "$tmp/out" | tr '\n' ' ')"
	else
		echo "PASS $name"
	fi
}
# one_line NAME: stderr of the last check was exactly one line.
one_line() {
	if [ "$(wc -l <"$tmp/err")" = 1 ]; then echo "PASS $1"; else echo "FAIL $1: stderr has $(wc -l <"$tmp/err") lines"; fi
}

check model_help 0 "usage: ka model test SPEC" -- "$KA" model --help
check model_test_help 0 "archive:<bank-path>" -- "$KA" model test --help
check model_no_sub 2 "ka model: missing subcommand (expected: test)" -- "$KA" model
check model_bad_sub 2 "unknown subcommand 'frob'" -- "$KA" model frob
check model_no_spec 2 "missing SPEC" -- "$KA" model test
check model_bad_flag 2 "unknown option '--bogus'" -- "$KA" model test --bogus cmd:cat
one_line model_bad_flag_one_line
check model_bad_value 2 "--max-tokens needs a positive integer, not 'lots'" -- "$KA" model test cmd:cat --max-tokens lots
check model_unknown_backend 2 "unknown backend 'foo' in model spec 'foo:bar'" -- "$KA" model test foo:bar
one_line model_unknown_backend_one_line
check model_no_key 2 "anthropic: no API key (set ANTHROPIC_API_KEY)" -- "$KA" model test anthropic:claude-3-5-sonnet-20241022
check model_no_aws 2 "bedrock: no AWS credentials" -- "$KA" model test bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0

check model_cmd 0 "HELLO" -- "$KA" model test "cmd:tr a-z A-Z" --prompt hello
check model_archive 0 "__global__ void vec_add" -- "$KA" model test archive:tests/data/model/bank --task vec_add --lang cuda
check model_replay 0 "sample zero" -- "$KA" model test replay:tests/data/model/replay.jsonl --task vec_add --sample 0
check model_replay_missing 1 "replay: no completion for task 'vec_add' sample 9" -- "$KA" model test replay:tests/data/model/replay.jsonl --task vec_add --sample 9

if ! command -v python3 >/dev/null; then
	echo "SKIP model_cli_http: python3 not found"
	exit 0
fi
python3 tools/fakeserver.py --port 0 >"$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
if [ -z "$port" ]; then echo "FAIL model_cli_http: fake server did not start"; exit 1; fi
base=http://127.0.0.1:$port

check model_openai 0 "seed=3 " -- "$KA" model test "openai:gpt-4o@$base/v1" --prompt hi --seed 3
check model_openai_tokens 0 "tokens:   in 11, out 7" -- "$KA" model test "openai:gpt-4o@$base/v1" --prompt hi
check model_anthropic_cost 0 'cost:     $0.033000 (at $3.000 in / $15.000 out per million tokens)' -- \
	"$KA" model test "anthropic:claude-3-5-sonnet-20241022@$base" --prompt '[[fixture:think]]' --lang cuda
check model_anthropic_code 0 "code:     1 lines extracted for cuda" -- \
	"$KA" model test "anthropic:claude-3-5-sonnet-20241022@$base" --prompt '[[fixture:think]]' --lang cuda
check model_json 0 '"ok": true' -- "$KA" model test "openai:gpt-4o@$base/v1" --prompt hi --json
check model_retry 0 "(2 attempts, HTTP 200)" -- "$KA" model test "openai:gpt-4o@$base/v1" --prompt '[[fixture:retry_429]]'
check model_bedrock 0 "model=anthropic.claude-3-5-sonnet-20240620-v1:0 " -- \
	env AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
	KA_BEDROCK_ENDPOINT="$base" "$KA" model test bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0@us-west-2
check model_bedrock_profile 0 "finish:   end_turn" -- \
	env AWS_PROFILE=kaproc AWS_SHARED_CREDENTIALS_FILE=tests/data/model/aws/credentials \
	AWS_CONFIG_FILE=tests/data/model/aws/config KA_BEDROCK_ENDPOINT="$base" \
	"$KA" model test bedrock:amazon.nova-lite-v1:0
check model_bedrock_bad_sig 1 "bedrock: HTTP 403: The request signature we calculated does not match" -- \
	env AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wrong KA_BEDROCK_ENDPOINT="$base" \
	"$KA" model test bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0
check model_not_json 1 "openai: reply is not JSON" -- "$KA" model test "openai:gpt-4o@$base/v1" --prompt '[[fixture:not_json]]'
one_line model_not_json_one_line
check model_unreachable 1 "Couldn't connect to server" -- "$KA" model test "openai:gpt-4o@http://127.0.0.1:1/v1" --retries 1
check model_cache_second_run 0 "cached" -- bash -c "'$KA' model test 'openai:gpt-4o@$base/v1' --prompt c --cache '$tmp/cache' >/dev/null && '$KA' model test 'openai:gpt-4o@$base/v1' --prompt c --cache '$tmp/cache'"
