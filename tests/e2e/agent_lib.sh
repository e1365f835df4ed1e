# tests/e2e/agent_lib.sh: what test_agent.sh and test_agent_faults.sh share
# (sourced after tests/lib.sh, with HERE and T set).

# metrics_url STDERR-FILE: where the agent serves /metrics, as it said.
metrics_url() {
	sed -n 's|^alys-bpf: serving the agent.s metrics at \(http://[0-9.:]*/metrics\)$|\1|p' "$1"
}
# value_of NAME: an unlabelled metric's value in the Prometheus text on stdin.
value_of() { awk -v m="$1" '$1 == m { print $2 }'; }

# start_receiver DIR [ARGS...]: tests/e2e/push_receiver.py (Pyroscope's and
# Parca's APIs as documented) on a free port, written to DIR/port; RX its pid.
start_receiver() {
	local dir=$1; shift
	mkdir -p "$dir"
	rm -f "$dir/port"
	"$ALYS_PYTHON" "$HERE/push_receiver.py" --out "$dir" --port-file "$dir/port" "$@" \
		>>"$dir/log" 2>&1 &
	RX=$!
	on_exit "kill $RX 2>/dev/null"
	wait_for_line "$dir/port" '^[0-9]+$' 10 || fail "receiver started" "$(cat "$dir/log")"
}

# bpf_programs_of PID NAME: how many loaded BPF programs named NAME the
# process PID holds.
bpf_programs_of() {
	bpftool -j prog show | "$ALYS_PYTHON" -c '
import json, sys
ids, name = set(map(int, sys.argv[1].split())), sys.argv[2]
print(sum(1 for p in json.load(sys.stdin) if p.get("name") == name and p["id"] in ids))
' "$(bpf_prog_ids "$1")" "$2"
}
