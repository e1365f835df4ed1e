#!/usr/bin/env bash
# Runs the C unit test of the trace reader's MessagePack decoding
# (tests/unit/test_mp_scan.c), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_mp_scan
