#!/usr/bin/env bash
# solutions_L3.sh (bank tier): tests/bank/lib/solutions.sh over the L3 tasks.
KA_BANK_TIER=L3 exec bash tests/bank/lib/solutions.sh
