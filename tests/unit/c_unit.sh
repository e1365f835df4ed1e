# tests/unit/c_unit.sh -- sourced by the wrappers of the C unit tests:
# run_c_unit BIN_DIR NAME [LOCK] builds them (make unit-tests) like the
# programs of BIN_DIR's build (plain for bin/, ASan+UBSan for bin-san/), then
# runs tests/unit/NAME.c's binary, whose last line is "N passed, M failed",
# holding the file LOCK (flock) if given.
run_c_unit() {
	local san=0 build=build
	cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
	case "$(basename "${1:-bin}")" in
	bin-san) san=1 build=build-san ;;
	esac
	make -s SAN=$san unit-tests || { echo "0 passed, 1 failed"; exit 1; }
	# A test that builds fixtures into tests/build/ runs against one build
	# at a time: run-all.sh runs both builds at once, and two compilers
	# writing one file (and Crystal's cache of it) collide.
	if [ -n "${3:-}" ]; then
		mkdir -p "$(dirname "$3")"
		exec flock "$3" "$build/tests/$2"
	fi
	exec "$build/tests/$2"
}
