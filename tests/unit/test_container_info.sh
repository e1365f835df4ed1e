#!/usr/bin/env bash
# Runs the C unit test of the container identity read from /proc
# (tests/unit/test_container_info.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_container_info
