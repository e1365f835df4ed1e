#!/usr/bin/env bash
# Runs the C unit test of the allocator-frame and constructor rules
# (tests/unit/test_crystal_names.c), built by the Makefile with the project's
# flags: plain for bin/, with ASan+UBSan for bin-san/.
set -uo pipefail
cd "$(dirname "$0")/../.."
case "$(basename "${1:-bin}")" in
bin-san) san=1 build=build-san ;;
*) san=0 build=build ;;
esac
make -s SAN=$san unit-tests || { echo "0 passed, 1 failed"; exit 1; }
exec "$build/tests/test_crystal_names"
