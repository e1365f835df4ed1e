#!/usr/bin/env bash
# Runs the C unit test of the hash table both programs use
# (tests/unit/test_u64_table.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_u64_table
