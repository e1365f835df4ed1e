#!/usr/bin/env bash
# Runs the C unit test of inlined frames' names (tests/unit/test_inline_names.c:
# cases read from --release binaries), built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_inline_names
