#!/usr/bin/env bash
# Runs the C unit test of the daemon's record sink (tests/unit/
# test_record_sink.c): liveness's deaths kept, dated and dropped, read back
# through the writer and the trace reader. Built like the programs.
set -uo pipefail
. "$(dirname "$0")/c_unit.sh"
run_c_unit "${1:-bin}" test_record_sink
