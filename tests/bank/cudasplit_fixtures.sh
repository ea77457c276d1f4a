#!/usr/bin/env bash
# cudasplit_fixtures.sh (bank tier): tests/unit/test_cudasplit.c on every
# CUDA compile fixture (KA_CUDASPLIT_FIXTURES=all): nvcc and the split
# compile give the same verdict, log and fat binary, with and without the
# fork servers. The quick tier runs the same test on a third of the folder
# fixtures and the L1 bank solution only (the compiles are most of its time).
set -u
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/tests/test_cudasplit" ]; then
	echo "FAIL cudasplit_fixtures: $BUILD/tests/test_cudasplit is not built (make test-bank builds it)"
	exit 1
fi
KA_CUDASPLIT_FIXTURES=all "$BUILD/tests/test_cudasplit"
