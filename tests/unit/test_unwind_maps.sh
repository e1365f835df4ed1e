#!/usr/bin/env bash
# Runs the C unit test of the unwind tables built on threads
# (tests/unit/test_unwind_maps.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_unwind_maps
