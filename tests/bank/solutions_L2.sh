#!/usr/bin/env bash
# solutions_L2.sh (bank tier): tests/bank/lib/solutions.sh over the L2 tasks.
KA_BANK_TIER=L2 exec bash tests/bank/lib/solutions.sh
