#!/usr/bin/env bash
# solutions_L1.sh (bank tier): tests/bank/lib/solutions.sh over the L1 tasks.
KA_BANK_TIER=L1 exec bash tests/bank/lib/solutions.sh
