# bench/http_lib.sh: sourced by the HTTP benches (http_server.sh,
# http_live.sh).
# start_pinned_server W: bench/workloads/http_json.cr built --release into
# W, listening on a random loopback port on CPU 1 (wrk goes on CPU 0: on a
# 2-CPU VM, unpinned runs of the same mode varied by 30% and more), warmed
# up. Sets PORT and SERVER; the caller's EXIT trap stops SERVER.
start_pinned_server() {
	local w=$1
	PORT=$((20000 + RANDOM % 20000))
	crystal build --release --no-color -o "$w/http_json" "$ROOT/bench/workloads/http_json.cr"
	taskset -c 1 "$w/http_json" $PORT >"$w/server.out" 2>&1 &
	SERVER=$!
	for _ in $(seq 100); do grep -q listening "$w/server.out" && break; sleep 0.1; done
	taskset -c 0 wrk -t1 -c4 -d2s "http://127.0.0.1:$PORT/" >/dev/null	# warm up
}
