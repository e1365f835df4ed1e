#!/usr/bin/env bash
# Runs the C unit test of --duty's windows (tests/unit/test_refill_windows.c):
# a slow attach runs on its own thread, never in the caller's loop.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_refill_windows
