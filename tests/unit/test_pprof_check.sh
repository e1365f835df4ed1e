#!/usr/bin/env bash
# run-all-builds: bin
# tests/pprof_check, the validator every pprof of the e2e suite goes
# through (tests/lib.sh pprof_valid): it must accept a valid profile and
# refuse each broken one in pprof_fixtures/ (text protos, encoded here with
# protoc) with the rule it breaks. A validator that accepts everything would
# let the suite pass on profiles Parca or Pyroscope refuse.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
make_tmpdir T

encode() {
	grep -v '^#' "$HERE/pprof_fixtures/$1.txtpb" |
		protoc --encode=perftools.profiles.Profile -I "$PROTO_DIR" "$PROTO_DIR/profile.proto" |
		gzip >"$T/$1.pb.gz"
}

bin=$(pprof_check_bin)
check_status "tests/pprof_check builds with Debian's Go and google/pprof" $?
encode good_min
out=$(pprof_valid "$T/good_min.pb.gz")
check_status "a valid profile passes" $?
check_match "... with its summary" "$out" 'ok \(1 samples, 2 locations, 1 sample types: alloc_space/bytes\)'

for c in "bad_location_id0:found location with reserved id=0" \
	"bad_function_id0:found function with reserved ID=0" \
	"bad_location_order:location 1 has id 2: ids must run 1..n in order" \
	"bad_function_order:function 2 has id 3: ids must run 1..n in order" \
	"bad_mapping_order:mapping 1 has id 2: ids must run 1..n in order" \
	"bad_sample_values:sample has 2 values vs. 1 types"; do
	f=${c%%:*} want=${c#*:}
	encode "$f"
	out=$(pprof_valid "$T/$f.pb.gz")
	check_eq "$f: refused" "$?" 1
	check_match "$f: the rule it breaks named" "$out" "$want"
done
# go tool pprof itself reads out-of-order ids: the extra rule is needed
go tool pprof -raw "$T/bad_location_order.pb.gz" >/dev/null 2>&1
check_status "go tool pprof alone accepts out-of-order ids (why the check exists)" $?
out=$(pprof_valid "$T/good_min.pb.gz" "$T/bad_mapping_order.pb.gz" "$T/missing.pb.gz")
check_eq "several files: fails if any does" "$?" 1
check_eq "... each named on its own line" "$(printf '%s\n' "$out" | wc -l)" 3
summary
