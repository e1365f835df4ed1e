#!/usr/bin/env bash
# Runs the C unit test of the daemon's stack-node tree
# (tests/unit/test_stack_table.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_stack_table
