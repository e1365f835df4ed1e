# tests/unit/c_unit.sh -- sourced by the wrappers of the C unit tests:
# run_c_unit BIN_DIR NAME builds them (make unit-tests) like the programs
# of BIN_DIR's build (plain for bin/, ASan+UBSan for bin-san/), then runs
# tests/unit/NAME.c's binary, whose last line is "N passed, M failed".
run_c_unit() {
	local san=0 build=build
	cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
	case "$(basename "${1:-bin}")" in
	bin-san) san=1 build=build-san ;;
	esac
	make -s SAN=$san unit-tests || { echo "0 passed, 1 failed"; exit 1; }
	exec "$build/tests/$2"
}
