#!/usr/bin/env bash
# Brings up what warren's tests and demo need: RabbitMQ with the management
# plugin, and PostgreSQL. Starts them when installed but stopped; installs
# them with apt-get when missing and permitted (root on Debian); otherwise
# says exactly what is missing. Idempotent.
set -euo pipefail

MGMT_URL=${WARREN_TEST_MGMT_URL:-http://127.0.0.1:15672}
PG_HOST=${WARREN_TEST_PG_HOST:-127.0.0.1}

say() { printf 'services: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

install_pkgs() {
  can_install || die "$1 is not installed and cannot be installed here (needs root and apt-get): install $2 and re-run"
  say "installing $2 with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $2 >/dev/null
}

wait_for() { # seconds, description, command...
  local n=$1 what=$2; shift 2
  for _ in $(seq "$n"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what did not come up within ${n}s"
}

rabbit() {
  if ! command -v rabbitmq-server >/dev/null 2>&1 && [ ! -x /usr/sbin/rabbitmq-server ]; then
    install_pkgs "RabbitMQ (rabbitmq-server)" rabbitmq-server
  fi
  export PATH="$PATH:/usr/sbin:/usr/lib/rabbitmq/bin"
  if ! rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
    say "starting RabbitMQ"
    rabbitmq-server -detached >/dev/null 2>&1 || true
    wait_for 90 "RabbitMQ" rabbitmq-diagnostics -q ping
  fi
  local want="rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management"
  local enabled
  enabled=$(rabbitmq-plugins list -e -m 2>/dev/null || true)
  for p in $want; do
    if ! grep -qx "$p" <<<"$enabled"; then
      say "enabling RabbitMQ plugins: $want"
      rabbitmq-plugins enable $want >/dev/null
      break
    fi
  done
  wait_for 60 "the RabbitMQ management API at $MGMT_URL" curl -fsS -u guest:guest "$MGMT_URL/api/overview"
}

postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    install_pkgs "PostgreSQL (postgresql)" postgresql
  fi
  if ! pg_isready -q -h "$PG_HOST"; then
    local ver
    ver=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    [ -n "$ver" ] || die "PostgreSQL is installed but has no cluster under /etc/postgresql: create one with pg_createcluster"
    say "starting PostgreSQL $ver"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start >/dev/null 2>&1 || true
    wait_for 60 "PostgreSQL on $PG_HOST:5432" pg_isready -q -h "$PG_HOST"
  fi
  if ! psql -h "$PG_HOST" -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
    die "PostgreSQL answers on $PG_HOST but user postgres cannot log in without a password: allow trust for 127.0.0.1 in pg_hba.conf, or set WARREN_TEST_PG_DSN"
  fi
  if [ "$(psql -h "$PG_HOST" -U postgres -d postgres -Atqc "select 1 from pg_database where datname='test'")" != 1 ]; then
    psql -h "$PG_HOST" -U postgres -d postgres -qc 'create database test' >/dev/null
  fi
}

case "${1:-all}" in
  rabbitmq) rabbit ;;
  postgres) postgres ;;
  all) rabbit; postgres ;;
  *) die "usage: $0 [all|rabbitmq|postgres]" ;;
esac
say "ready: RabbitMQ ($MGMT_URL) and PostgreSQL ($PG_HOST)"
