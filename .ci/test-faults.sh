#!/usr/bin/env bash
# Runs the fault suite on each broker named (3.10, 4.3, cluster) at once,
# one process per broker: a fault strikes only its own broker's nodes.
# The faults that strike something shared — PostgreSQL, the audit file —
# run in one process only, the second broker's when there are several
# (it has the least else to do). Each process writes its own log, printed
# whole when it ends; the run fails when any does.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
shared='Postgres|AuditFile'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
brokers=("$@")
pids=()
for i in "${!brokers[@]}"; do
  b=${brokers[$i]}
  skip=()
  if [ "${#brokers[@]}" -gt 1 ] && [ "$i" -ne 1 ]; then
    skip=(-skip "$shared")
  fi
  echo "test-faults: $b: $GO test -count=1 -p 1 -v -timeout 30m -tags faults -run Fault ${skip[*]} ./cli/faults/"
  WARREN_FAULTS_BROKERS=$b $GO test -count=1 -p 1 -v -timeout 30m -tags faults -run Fault "${skip[@]}" ./cli/faults/ >"$logs/$b.log" 2>&1 &
  pids+=("$!")
done
status=0
for i in "${!brokers[@]}"; do
  b=${brokers[$i]}
  if wait "${pids[$i]}"; then result=ok; else result=FAILED; status=1; fi
  echo "---- faults on $b: $result"
  cat "$logs/$b.log"
done
exit $status
