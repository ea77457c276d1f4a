# Sourced by every tests/gpu/*.sh: sets KA and BUILD, and ends the script
# with "SKIP <name>: ..." where there is no NVIDIA GPU or no CUDA runner.
# Usage: . tests/gpu/lib/need_gpu.sh NAME
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-cuda" ] || ! { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }; then
	echo "SKIP $1: no NVIDIA GPU or no CUDA runner here (run make test-gpu on a GPU machine)"
	exit 0
fi
