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
pids=()
# Killed or interrupted, the run stops its passes too, each started in a
# session of its own so the test binary goes with the go command: a fault
# pass left behind would go on stopping brokers and PostgreSQL.
stop() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done; }
trap 'stop; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM
brokers=("$@")
for i in "${!brokers[@]}"; do
  b=${brokers[$i]}
  skip=()
  shown=""
  if [ "${#brokers[@]}" -gt 1 ] && [ "$i" -ne 1 ]; then
    skip=(-skip "$shared")
    shown="-skip '$shared' "
  fi
  echo "test-faults: $b: WARREN_FAULTS_BROKERS=$b $GO test -count=1 -p 1 -v -timeout 30m -tags faults -run Fault $shown./cli/faults/"
  WARREN_FAULTS_BROKERS=$b setsid $GO test -count=1 -p 1 -v -timeout 30m -tags faults -run Fault "${skip[@]}" ./cli/faults/ >"$logs/$b.log" 2>&1 &
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
