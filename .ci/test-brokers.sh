#!/usr/bin/env bash
# Runs the suite against each broker named (3.10, 4.3) at once: every
# package on 3.10, the packages that talk to a broker on the others. Each
# pass writes its own log, printed whole when it ends; the run fails when
# any pass does.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TIMEOUT=${TEST_TIMEOUT:-15m}
PKGS=${PKGS:-./...}
BROKER_PKGS=${BROKER_PKGS:?BROKER_PKGS names the packages that talk to a broker}
logs=$(mktemp -d)
pids=()
# Killed or interrupted, the run stops its passes too, each started in a
# session of its own so the test binaries go with the go command: a pass
# left behind would go on using the brokers.
stop() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done; }
trap 'stop; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM
for b in "$@"; do
  pkgs=$BROKER_PKGS
  [ "$b" = 3.10 ] && pkgs=$PKGS
  echo "test: RabbitMQ $b: $GO test -tags integration -count=1 -parallel 8 -timeout $TIMEOUT $pkgs"
  # shellcheck disable=SC2086
  WARREN_TEST_BROKER=$b setsid $GO test -tags integration -count=1 -parallel 8 -timeout "$TIMEOUT" $pkgs >"$logs/$b.log" 2>&1 &
  pids+=("$!")
done
status=0
i=0
for b in "$@"; do
  if wait "${pids[$i]}"; then result=ok; else result=FAILED; status=1; fi
  echo "---- RabbitMQ $b: $result"
  cat "$logs/$b.log"
  i=$((i + 1))
done
exit $status
