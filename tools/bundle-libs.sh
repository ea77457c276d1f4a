#!/usr/bin/env bash
# tools/bundle-libs.sh BUILD: copy the shared libraries that ka's programs need
# beyond glibc, the C++ runtime, the NVIDIA driver and the CUDA toolkit into BUILD/lib, so the
# build can run on a machine that lacks them (the GPU machine has no jansson,
# SQLite or Lua packages). Use it with LD_LIBRARY_PATH=BUILD/lib.
set -eu
B=${1:-build}
mkdir -p "$B/lib"
for prog in "$B"/ka "$B"/ka-record-* "$B"/ka-run-* "$B"/ka-clc "$B"/ka-goldbox; do
	[ -x "$prog" ] || continue
	ldd "$prog" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so*|libm.so*|libresolv.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|ld-linux*|libstdc++*|libgcc_s*|libcuda.so*|libnvidia*|libcupti*|libOpenCL*|libcublas*|libcudart*|libnvrtc*) ;; # the CUDA toolkit's own: the GPU machine has them
	*) cp -L "$lib" "$B/lib/" ;;
	esac
done
ls "$B/lib"
