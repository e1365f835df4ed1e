#!/usr/bin/env bash
# Runs the C unit test of the allocator-frame and site rules
# (tests/unit/test_crystal_names.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_crystal_names
