#!/usr/bin/env bash
# test_release_names.sh: names of inlined frames (issue 37). An HTTP server
# whose handler builds an Array(Item), an Array(String) and a Hash(String,
# Int32) per request (tests/programs/http_names.cr), built --release (where
# the standard library is inlined: Crystal's DWARF names an inlined method
# alone, "new") and without, attached with --pid --http under wrk; `go tool
# pprof -top` of its live allocations must list the three constructors on
# rows of their own, with their instantiations, no row a bare method name
# or a declaring type's parameters (Array(T), Hash(K, V)) shown as a type,
# class methods with "."; the same names in the report and folded stacks of
# the trace written meanwhile. Unit cases of the rule: test_inline_names.
# run-all-builds: bin
#   tests/e2e/test_release_names.sh BINDIR
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
for tool in go wrk; do
	command -v $tool >/dev/null || fail "$tool installed" "run scripts/setup-debian.sh"
done

# ALYS_NAMES_VARIANTS="NAME ...": other builds (Crystal 1.21's, by hand:
# docs/DESIGN.md "Toolchains")
for v in ${ALYS_NAMES_VARIANTS:-http_names-release http_names}; do
	port=$((20000 + RANDOM % 20000))
	"$ALYS_PROGS/$v" $port >"$T/$v.out" 2>&1 &
	sp=$!
	on_exit "kill $sp 2>/dev/null"
	wait_for_line "$T/$v.out" '^listening' 30 || fail "$v: server started" "$(cat "$T/$v.out")"
	# every allocation (the subject is names: a small constructor must not
	# be left out of a window by sampling)
	"$BIN/alys-bpf" --sample all --pid $sp --http 0 -o "$T/$v.alys" 2>"$T/$v.err" &
	ap=$!
	on_exit "kill -INT $ap 2>/dev/null"
	wait_for_line "$T/$v.err" '^alys-bpf: tracing pid' 30 || fail "$v: attached" "$(cat "$T/$v.err")"
	url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://127\.0\.0\.1:[0-9]*\)/debug/pprof/$|\1|p' "$T/$v.err")
	wrk -t1 -c4 -d6s "http://127.0.0.1:$port/" >/dev/null 2>&1 &
	lp=$!
	curl -sf -o "$T/$v.pb.gz" "$url/debug/pprof/allocs?seconds=4"
	check_eq "$v: /debug/pprof/allocs?seconds=4 answers" "$?" 0
	wait $lp
	kill -INT $ap
	wait $ap
	kill $sp
	# every function name pprof lists (look-alikes of :: and . as a user
	# reads them), and the names of the trace's other outputs
	go tool pprof -top -nodecount=100000 "$T/$v.pb.gz" 2>/dev/null | seen |
		awk 'f { sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, ""); sub(/ \(inline\)$/, ""); print }
			/flat%/ { f = 1 }' >"$T/$v.top"
	"$BIN/alys_converter" -q -f folded-stacks -o - "$T/$v.alys" | sed 's/ [0-9]*$//' | tr ';' '\n' |
		sort -u >"$T/$v.folded"
	check_ge "$v: pprof lists its functions" "$(wc -l <"$T/$v.top")" 20
	# (a name two functions share gets its argument types: "Array(String).new()";
	# Item.new is called with named arguments: new:id:name:email)
	for ty in 'Array(Item)' 'Array(String)' 'Hash(String, Int32)' Item; do
		re="^$(printf '%s' "$ty" | sed 's/[()]/\\&/g')\.new(\([^)]*\))?\$"
		check_ge "$v: $ty.new, a row of its own" "$(grep -cE "$re" "$T/$v.top")" 1
		check_ge "$v: ... in the folded stacks too" "$(grep -cE "$re" "$T/$v.folded")" 1
	done
	check_eq "$v: no row a bare method name (new, initialize, new_from_json_pull_parser, ...)" \
		"$(grep -cE '^(new|initialize|new_[a-z_]+|push|upsert|<<|\[\]=)(:.*)?$' "$T/$v.top" "$T/$v.folded" |
			awk -F: '{ s += $2 } END { print s }')" 0
	check_eq "$v: no declaring type's parameters shown as a type (Array(T), Hash(K, V))" \
		"$(cat "$T/$v.top" "$T/$v.folded" | grep -cE '\((([A-Z]|[A-Z][A-Z]?), )*[A-Z]\)')" 0
	check_eq "$v: no class method with # (Foo#new, Foo#allocate)" \
		"$(cat "$T/$v.top" "$T/$v.folded" | grep -cE '#(new|allocate|new_[a-z_]+)$')" 0
done
check_all_pprof_valid "$T"
summary
