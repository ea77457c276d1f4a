#!/usr/bin/env bash
# compile.sh (bank tier): every file of every task in bank/public compiles
# (tests/e2e/starter_compile.sh over the whole bank).
KA_TEST_BANK=all exec bash tests/e2e/starter_compile.sh
