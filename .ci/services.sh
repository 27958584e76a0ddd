#!/usr/bin/env bash
# Brings up what warren's tests and demo need: the system's RabbitMQ (3.10
# on Debian 12) with the management plugin, RabbitMQ 4.3 beside it (from
# Debian testing, in a debootstrap root, with TLS listeners), and
# PostgreSQL. Starts what is installed but stopped; installs what is
# missing with apt-get when permitted (root on Debian); otherwise says
# exactly what is missing. Idempotent, and fast when everything is up.
#
#   services.sh [all|rabbitmq|rabbitmq43|postgres|stop]
#
# WARREN_TEST_BROKER=3.10 leaves 4.3 alone (and =4.3 the system's broker);
# `stop` stops the 4.3 node this script started; the system's RabbitMQ and
# PostgreSQL are shared and left running.
set -euo pipefail

MGMT_URL=${WARREN_TEST_MGMT_URL:-http://127.0.0.1:15672}
PG_HOST=${WARREN_TEST_PG_HOST:-127.0.0.1}
WANT_PLUGINS="rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management"

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

# mgmt_has_shovel URL: the management API answers and serves the shovel
# plugin's pages, so the three plugins are on.
mgmt_has_shovel() {
  curl -fsS -m 5 -u guest:guest "$1/api/extensions" 2>/dev/null | grep -q shovel
}

rabbit() {
  if mgmt_has_shovel "$MGMT_URL"; then return 0; fi
  if ! command -v rabbitmq-server >/dev/null 2>&1 && [ ! -x /usr/sbin/rabbitmq-server ]; then
    install_pkgs "RabbitMQ (rabbitmq-server)" rabbitmq-server
  fi
  export PATH="$PATH:/usr/sbin:/usr/lib/rabbitmq/bin"
  if ! rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
    say "starting RabbitMQ"
    rabbitmq-server -detached >/dev/null 2>&1 || true
    wait_for 90 "RabbitMQ" rabbitmq-diagnostics -q ping
  fi
  # The node can run with its application stopped (rabbitmqctl stop_app,
  # as the fault suite does): start it.
  if ! rabbitmq-diagnostics -q check_running >/dev/null 2>&1; then
    say "starting the RabbitMQ application"
    rabbitmqctl start_app >/dev/null 2>&1 || true
    wait_for 60 "the RabbitMQ application" rabbitmq-diagnostics -q check_running
  fi
  local enabled
  enabled=$(rabbitmq-plugins list -e -m 2>/dev/null || true)
  for p in $WANT_PLUGINS; do
    if ! grep -qx "$p" <<<"$enabled"; then
      say "enabling RabbitMQ plugins: $WANT_PLUGINS"
      rabbitmq-plugins enable $WANT_PLUGINS >/dev/null
      break
    fi
  done
  wait_for 60 "the RabbitMQ management API at $MGMT_URL" mgmt_has_shovel "$MGMT_URL"
}

# ---- RabbitMQ 4.3 in a debootstrap root -------------------------------------
# Debian testing (forky) ships rabbitmq-server 4.3 with Erlang 29. The root
# is built once into a cache outside the clone and reused; the node gets a
# name, an epmd port and a distribution port of its own, so it runs beside
# the system's node.
R43_VERSION=4.3
R43_SUITE=forky
R43_AMQP=5673 R43_AMQPS=5674 R43_HTTP=15673 R43_HTTPS=15674
R43_EPMD=4370 R43_DIST=25673 R43_NODE=rabbit43@localhost

cache_dir() {
  if [ -n "${WARREN_CACHE_DIR:-}" ]; then echo "$WARREN_CACHE_DIR"
  elif [ "$(id -u)" = 0 ]; then echo /var/cache/warren
  else echo "${XDG_CACHE_HOME:-$HOME/.cache}/warren"; fi
}
R43_DIR=$(cache_dir)/rabbitmq-$R43_VERSION
R43_ROOT=$R43_DIR/root
R43_TLS=$R43_DIR/tls

# in43 runs a command inside the root with a clean environment that points
# the Erlang tools at the 4.3 node's own epmd, all on loopback.
in43() {
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    ERL_EPMD_PORT=$R43_EPMD ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_NODENAME=$R43_NODE \
    ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    chroot "$R43_ROOT" "$@"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

r43_up() {
  curl -fsS -m 5 -u guest:guest "http://127.0.0.1:$R43_HTTP/api/overview" 2>/dev/null |
    grep -q "\"rabbitmq_version\":\"$R43_VERSION\." &&
    mgmt_has_shovel "http://127.0.0.1:$R43_HTTP" &&
    port_open $R43_AMQP && port_open $R43_AMQPS && port_open $R43_HTTPS
}

# apt_mirror prints the Debian archive apt already uses, read from apt's
# own sources (deb822 files first, then sources.list).
apt_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    uri=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) print $i; break } }' "$f" | head -n 1)
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  return 1
}

# umount_under DIR unmounts everything mounted below DIR, deepest first.
umount_under() {
  local m
  for m in $(awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
}

r43_build_root() {
  [ -x "$R43_ROOT/usr/lib/rabbitmq/bin/rabbitmq-server" ] && [ -f "$R43_DIR/root.ok" ] && return 0
  [ "$(id -u)" = 0 ] || die "RabbitMQ $R43_VERSION needs root to build and run its chroot in $R43_ROOT; run make services as root, or set WARREN_TEST_BROKER=3.10"
  if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
    install_pkgs "debootstrap" debootstrap
  fi
  export PATH="$PATH:/usr/sbin:/sbin"
  local script=/usr/share/debootstrap/scripts/sid
  [ -r "$script" ] || die "debootstrap has no script for Debian unstable ($script): install a newer debootstrap"
  local mirror
  mirror=$(apt_mirror) || die "no Debian archive found in apt's sources (/etc/apt/sources.list.d/*.sources URIs:, or /etc/apt/sources.list)"
  mkdir -p "$R43_DIR"
  local tmp=$R43_DIR/root.tmp
  umount_under "$tmp"
  rm -rf "$tmp"
  say "building a Debian $R43_SUITE root with rabbitmq-server in $R43_ROOT (about a minute, once)"
  if ! debootstrap --variant=minbase --include=rabbitmq-server "$R43_SUITE" "$tmp" "$mirror" "$script" >"$R43_DIR/debootstrap.log" 2>&1; then
    umount_under "$tmp"
    die "debootstrap of $R43_SUITE failed; its log: $R43_DIR/debootstrap.log"
  fi
  umount_under "$tmp"
  umount_under "$R43_ROOT"
  rm -rf "$R43_ROOT"
  mv "$tmp" "$R43_ROOT"
  in43 dpkg-query -W -f '${Version}\n' rabbitmq-server >"$R43_DIR/root.ok"
}

# r43_pki makes a CA, a server certificate for 127.0.0.1/localhost and a
# client certificate (CN guest), renewed when one ends within a day. The
# tests read them here (sources/brokertest) and mint bad ones with the CA.
r43_pki() {
  local d=$R43_TLS
  mkdir -p "$d"
  if [ -f "$d/ca.pem" ] && openssl x509 -checkend 86400 -noout -in "$d/ca.pem" >/dev/null &&
    [ -f "$d/server.pem" ] && openssl x509 -checkend 86400 -noout -in "$d/server.pem" >/dev/null &&
    [ -f "$d/client.pem" ] && openssl x509 -checkend 86400 -noout -in "$d/client.pem" >/dev/null; then
    return 0
  fi
  say "making a test CA with server and client certificates in $d"
  (
    cd "$d"
    umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj "/CN=warren test CA" -keyout ca-key.pem -out ca.pem \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    leaf() { # name, CN, extended key usage, extra extensions
      printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s\n' "$3" "$4" >"$1.ext"
      openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=$2" -keyout "$1-key.pem" -out "$1.csr" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 825 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    leaf server localhost serverAuth "subjectAltName=IP:127.0.0.1,DNS:localhost"
    leaf client guest clientAuth ""
    chmod 644 ca.pem server.pem client.pem
  )
}

r43_configure() {
  cp /etc/hosts "$R43_ROOT/etc/hosts"
  local etc=$R43_ROOT/etc/rabbitmq
  mkdir -p "$etc/tls"
  cp "$R43_TLS/ca.pem" "$R43_TLS/server.pem" "$R43_TLS/server-key.pem" "$etc/tls/"
  in43 chown -R rabbitmq:rabbitmq /etc/rabbitmq/tls
  cat >"$etc/rabbitmq-env.conf" <<EOF
# Written by warren's .ci/services.sh: a node beside the system's.
NODENAME=$R43_NODE
DIST_PORT=$R43_DIST
ERL_EPMD_PORT=$R43_EPMD
ERL_EPMD_ADDRESS=127.0.0.1
export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"
EOF
  cat >"$etc/rabbitmq.conf" <<EOF
# Written by warren's .ci/services.sh.
loopback_users = none
listeners.tcp.default = 127.0.0.1:$R43_AMQP
listeners.ssl.default = 127.0.0.1:$R43_AMQPS
ssl_options.cacertfile = /etc/rabbitmq/tls/ca.pem
ssl_options.certfile = /etc/rabbitmq/tls/server.pem
ssl_options.keyfile = /etc/rabbitmq/tls/server-key.pem
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
management.tcp.ip = 127.0.0.1
management.tcp.port = $R43_HTTP
management.ssl.ip = 127.0.0.1
management.ssl.port = $R43_HTTPS
management.ssl.cacertfile = /etc/rabbitmq/tls/ca.pem
management.ssl.certfile = /etc/rabbitmq/tls/server.pem
management.ssl.keyfile = /etc/rabbitmq/tls/server-key.pem
management.ssl.verify = verify_peer
management.ssl.fail_if_no_peer_cert = true
EOF
  echo "[${WANT_PLUGINS// /,}]." >"$etc/enabled_plugins"
}

rabbit43() {
  if r43_up; then return 0; fi
  (
    flock 9
    if r43_up; then exit 0; fi
    r43_build_root
    r43_pki
    r43_configure
    mountpoint -q "$R43_ROOT/proc" || mount -t proc proc "$R43_ROOT/proc"
    if ! in43 rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
      say "starting RabbitMQ $R43_VERSION ($R43_NODE, AMQP $R43_AMQP, AMQPS $R43_AMQPS, management $R43_HTTP, HTTPS $R43_HTTPS)"
      in43 rabbitmq-server -detached >/dev/null 2>&1 || true
    fi
    wait_for 120 "RabbitMQ $R43_VERSION (its log: $R43_ROOT/var/log/rabbitmq/)" r43_up
  ) 9>"$(mkdir -p "$R43_DIR" && echo "$R43_DIR/lock")"
}

stop43() {
  [ -d "$R43_ROOT" ] || return 0
  if mountpoint -q "$R43_ROOT/proc"; then
    if in43 rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
      say "stopping RabbitMQ $R43_VERSION ($R43_NODE)"
      in43 rabbitmqctl -q stop >/dev/null 2>&1 || true
    fi
    in43 epmd -kill >/dev/null 2>&1 || true
  fi
  umount_under "$R43_ROOT"
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

brokers() {
  case "${WARREN_TEST_BROKER:-}" in
    3.10) rabbit ;;
    4.3) rabbit43 ;;
    "") rabbit; rabbit43 ;;
    *) die "WARREN_TEST_BROKER=$WARREN_TEST_BROKER: expected 3.10 or 4.3" ;;
  esac
}

case "${1:-all}" in
  rabbitmq) rabbit ;;
  rabbitmq43) rabbit43 ;;
  postgres) postgres ;;
  stop) stop43; exit 0 ;;
  all) brokers; postgres ;;
  *) die "usage: $0 [all|rabbitmq|rabbitmq43|postgres|stop]" ;;
esac
say "ready: RabbitMQ ${WARREN_TEST_BROKER:-3.10 and 4.3} and PostgreSQL ($PG_HOST)"
