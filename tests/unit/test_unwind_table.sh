#!/usr/bin/env bash
# Runs the C unit test of the unwind-table builder and reference unwinder
# (tests/unit/test_unwind_table.c), built like the programs: plain for bin/,
# with ASan+UBSan for bin-san/.
set -uo pipefail
cd "$(dirname "$0")/../.."
case "$(basename "${1:-bin}")" in
bin-san) san=1 build=build-san ;;
*) san=0 build=build ;;
esac
make -s SAN=$san unit-tests || { echo "0 passed, 1 failed"; exit 1; }
exec "$build/tests/test_unwind_table"
