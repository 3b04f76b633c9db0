#!/usr/bin/env bash
# Instructions per row (callgrind: deterministic, unaffected by machine load) of the timed
# body of workloads, for contenders, on the --quick sizes (one run, no warm-up).
#
#   Benchmarks/Scripts/instructions.sh [WORKLOADS] [CONTENDERS]
#   Benchmarks/Scripts/instructions.sh insert,fetch-all,find-id,each raw-C,ActiveObjects
#   Benchmarks/Scripts/instructions.sh northwind,northwind-text raw-C,ActiveObjects
#   ROUNDS=4 Benchmarks/Scripts/instructions.sh each raw-C,ActiveObjects   # warm: one-time costs
#                                                                          # (schema, conformance
#                                                                          # caches) spread over 4
#
# Builds its own release binary in Benchmarks/.build-callgrind, with the C code's debug info
# in DWARF 4: clang emits DWARF 5 by default, which the valgrind of Debian 12 (3.19) cannot
# read ("Possibly corrupted debuginfo file").
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
swift build -c release --package-path "$here" --scratch-path "$here/.build-callgrind" -Xcc -gdwarf-4 >&2
binary="$here/.build-callgrind/release/Benchmarks"
workloads="${1:-insert,fetch-all,find-id,each,northwind,northwind-text}"
contenders="${2:-raw-C,ActiveObjects,GRDB-Codable,GRDB-hand}"
rounds="${ROUNDS:-1}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --quick sizes: insert 5,000 objects; table 10,000 rows; 2,000 lookups; 2,000 Northwind orders.
declare -A rows=([insert]=5000 [insert-all]=5000 [fetch-all]=10000 [find-id]=2000 [each]=10000 [northwind]=2000 [northwind-text]=2000)
declare -A method=([insert]='Contender.insert(' [insert-all]='Contender.insertAll(' [fetch-all]='Contender.fetchAll' [find-id]='Contender.find'
                   [each]='Contender.each' [northwind]='Contender.fetchOrders()' [northwind-text]='Contender.fetchOrdersAsText')
for w in ${workloads//,/ }; do
  for c in ${contenders//,/ }; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$binary" --quick --no-memory \
      --only "$w" --contenders "$c" --rounds "$rounds" --warmups 0 --no-svg >/dev/null 2>&1
    total=$(callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null | swift-demangle --simplified \
      | grep "protocol witness for ${method[$w]}" | head -1 | awk '{gsub(",","",$1); print $1}')
    printf 'INSTR %-10s %-14s %10.0f instructions/row\n' "$w" "$c" "$(echo "$total / (${rows[$w]} * $rounds)" | bc -l)"
  done
done
