#!/usr/bin/env bash
# Runs the C unit test of the unwind-table builder and reference unwinder
# (tests/unit/test_unwind_table.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_unwind_table tests/build/.unwind-fixtures.lock
