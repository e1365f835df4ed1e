# bench/http_lib.sh: sourced by the HTTP benches (http_server.sh,
# http_live.sh).
# start_pinned_server W: bench/workloads/http_json.cr built --release into
# W, listening on a random loopback port on CPU 1 (wrk goes on CPU 0: on a
# 2-CPU VM, unpinned runs of the same mode varied by 30% and more), warmed
# up. Sets PORT and SERVER; the caller's EXIT trap stops SERVER.
# LIBGC_DIR=DIR links DIR/libgc.a into it instead of Debian's libgc.so (the
# toolchain matrix's builds: tests/build/programs/.gc-clang is libgc as the
# official Crystal tarballs build it).
start_pinned_server() {
	local w=$1 link=()
	PORT=$((20000 + RANDOM % 20000))
	if [ -n "${LIBGC_DIR:-}" ]; then
		[ -f "$LIBGC_DIR/libgc.a" ] || { echo "no $LIBGC_DIR/libgc.a" >&2; return 1; }
		link=(--link-flags "-L$(cd "$LIBGC_DIR" && pwd)")
	fi
	crystal build --release --no-color "${link[@]}" -o "$w/http_json" \
		"$ROOT/bench/workloads/http_json.cr"
	if [ -n "${LIBGC_DIR:-}" ] && ldd "$w/http_json" | grep 'libgc\.so' >/dev/null; then
		echo "$w/http_json still links libgc.so" >&2
		return 1
	fi
	taskset -c 1 "$w/http_json" $PORT >"$w/server.out" 2>&1 &
	SERVER=$!
	for _ in $(seq 100); do grep -q listening "$w/server.out" && break; sleep 0.1; done
	taskset -c 0 wrk -t1 -c4 -d2s "http://127.0.0.1:$PORT/" >/dev/null	# warm up
}
