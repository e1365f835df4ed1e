#!/usr/bin/env bash
# Runs the C unit test of what /proc/cpuinfo says of the page tables
# (tests/unit/test_cpu_paging.c).
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_cpu_paging
