#!/usr/bin/env bash
# Brings up what warren's tests and demo need: the system's RabbitMQ (3.10
# on Debian 12) with the management plugin, RabbitMQ 4.3 beside it (from
# Debian testing, in a debootstrap root, with TLS listeners), and
# PostgreSQL. Starts what is installed but stopped; installs what is
# missing with apt-get when permitted (root on Debian); otherwise says
# exactly what is missing. Idempotent, and fast when everything is up.
#
#   services.sh [all|rabbitmq|rabbitmq43|cluster|cluster-stop|postgres|stop]
#   services.sh ctl NODE ARGS...   rabbitmqctl for NODE (43, c1, c2 or c3)
#
# WARREN_TEST_BROKER=3.10 leaves 4.3 alone (and =4.3 the system's broker);
# `cluster` brings up three more 4.3 nodes from the same root, joined into
# one cluster, for the fault suite; `stop` stops the 4.3 nodes this script
# started; the system's RabbitMQ and PostgreSQL are shared and left running.
set -euo pipefail

MGMT_URL=${WARREN_TEST_MGMT_URL:-http://127.0.0.1:15672}
METRICS_URL=${WARREN_TEST_METRICS_URL:-http://127.0.0.1:15692}
PG_HOST=${WARREN_TEST_PG_HOST:-127.0.0.1}
WANT_PLUGINS="rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management rabbitmq_prometheus"

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

# metrics_up URL: the Prometheus plugin answers with the queues' depths.
metrics_up() {
  curl -fsS -m 5 "$1/metrics/detailed?family=queue_coarse_metrics" 2>/dev/null | grep -q rabbitmq_identity_info
}

# plugins_up MGMT_URL METRICS_URL: every plugin of WANT_PLUGINS answers.
plugins_up() { mgmt_has_shovel "$1" && metrics_up "$2"; }

rabbit() {
  if plugins_up "$MGMT_URL" "$METRICS_URL"; then return 0; fi
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
  wait_for 60 "the RabbitMQ management API at $MGMT_URL and its metrics at $METRICS_URL" plugins_up "$MGMT_URL" "$METRICS_URL"
}

# ---- RabbitMQ 4.3 in a debootstrap root -------------------------------------
# Debian testing (forky) ships rabbitmq-server 4.3 with Erlang 29. The root
# is built once into a cache outside the clone and reused; the node gets a
# name, an epmd port and a distribution port of its own, so it runs beside
# the system's node.
R43_VERSION=4.3
R43_SUITE=forky
R43_AMQP=5673 R43_AMQPS=5674 R43_HTTP=15673 R43_HTTPS=15674 R43_METRICS=15695
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
    plugins_up "http://127.0.0.1:$R43_HTTP" "http://127.0.0.1:$R43_METRICS" &&
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

r43_root_ok() { [ -x "$R43_ROOT/usr/lib/rabbitmq/bin/rabbitmq-server" ] && [ -f "$R43_DIR/root.ok" ]; }

r43_build_root() {
  r43_root_ok && return 0
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
# tests read them here (testkit) and mint bad ones with the CA.
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
prometheus.tcp.ip = 127.0.0.1
prometheus.tcp.port = $R43_METRICS
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
    if in43 rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
      # Running: once its management API is up, a node that serves no
      # metrics was started with an older configuration.
      wait_for 120 "RabbitMQ $R43_VERSION's management API" mgmt_has_shovel "http://127.0.0.1:$R43_HTTP"
      if ! metrics_up "http://127.0.0.1:$R43_METRICS"; then
        say "restarting RabbitMQ $R43_VERSION ($R43_NODE) to serve its metrics on $R43_METRICS, as its configuration now says"
        in43 rabbitmqctl -q stop >/dev/null 2>&1 || true
      fi
    fi
    if ! in43 rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
      say "starting RabbitMQ $R43_VERSION ($R43_NODE, AMQP $R43_AMQP, AMQPS $R43_AMQPS, management $R43_HTTP, HTTPS $R43_HTTPS)"
      in43 rabbitmq-server -detached >/dev/null 2>&1 9>&- || true
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

# ---- A three-node RabbitMQ 4.3 cluster from the same root -------------------
# Three nodes, rabbitc1..3@localhost, share the root (and so its Erlang
# cookie) and an epmd of their own; each has its own distribution port,
# data and log directories, rabbitmq.conf and enabled_plugins, named by a
# rabbitmq-env.conf of its own. c2 and c3 join c1 once; the cluster
# remembers it, so a warm start is three nodes booting side by side.
RC_EPMD=4381
RC_NODES="c1 c2 c3"
rc_index() { echo "${1#c}"; }
rc_amqp() { echo $((5680 + $(rc_index "$1"))); }
rc_http() { echo $((15680 + $(rc_index "$1"))); }
rc_dist() { echo $((25680 + $(rc_index "$1"))); }
rc_name() { echo "rabbit$1@localhost"; }

# inc NODE runs a command inside the root as in43 does, for a cluster node.
inc() {
  local n=$1; shift
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    ERL_EPMD_PORT=$RC_EPMD ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_NODENAME="$(rc_name "$n")" \
    RABBITMQ_CONF_ENV_FILE=/etc/rabbitmq/cluster/$n/rabbitmq-env.conf \
    ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    chroot "$R43_ROOT" "$@"
}

# rc_node_up NODE: the node's management API answers for 4.3 and its
# AMQP listener is open.
rc_node_up() {
  curl -fsS -m 5 -u guest:guest "http://127.0.0.1:$(rc_http "$1")/api/overview" 2>/dev/null |
    grep -q "\"rabbitmq_version\":\"$R43_VERSION\." && port_open "$(rc_amqp "$1")"
}

# rc_running: c1's API lists the three nodes, each running.
rc_running() {
  local nodes n
  nodes=$(curl -fsS -m 5 -u guest:guest "http://127.0.0.1:$(rc_http c1)/api/nodes?columns=name,running" 2>/dev/null) || return 1
  for n in $RC_NODES; do
    grep -Eq "\"name\":\"$(rc_name "$n")\",\"running\":true|\"running\":true,\"name\":\"$(rc_name "$n")\"" <<<"$nodes" || return 1
  done
}

cluster_up() {
  local n
  for n in $RC_NODES; do rc_node_up "$n" || return 1; done
  rc_running
}

rc_configure() {
  local n=$1 etc=$R43_ROOT/etc/rabbitmq/cluster/$1 data=/var/lib/rabbitmq/cluster/$1
  cp /etc/hosts "$R43_ROOT/etc/hosts"
  mkdir -p "$etc" "$R43_ROOT$data/mnesia" "$R43_ROOT$data/log"
  in43 chown -R rabbitmq:rabbitmq "$data"
  cat >"$etc/rabbitmq-env.conf" <<EOF
# Written by warren's .ci/services.sh: cluster node $n.
NODENAME=$(rc_name "$n")
DIST_PORT=$(rc_dist "$n")
ERL_EPMD_PORT=$RC_EPMD
ERL_EPMD_ADDRESS=127.0.0.1
CONFIG_FILE=/etc/rabbitmq/cluster/$n/rabbitmq.conf
ENABLED_PLUGINS_FILE=/etc/rabbitmq/cluster/$n/enabled_plugins
MNESIA_BASE=$data/mnesia
LOG_BASE=$data/log
export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"
EOF
  cat >"$etc/rabbitmq.conf" <<EOF
# Written by warren's .ci/services.sh.
loopback_users = none
listeners.tcp.default = 127.0.0.1:$(rc_amqp "$n")
management.tcp.ip = 127.0.0.1
management.tcp.port = $(rc_http "$n")
EOF
  echo "[rabbitmq_management]." >"$etc/enabled_plugins"
}

# rc_member NODE: NODE runs and counts c1 among its cluster's members.
rc_member() {
  inc "$1" rabbitmqctl -q cluster_status --formatter json 2>/dev/null | grep -q "\"$(rc_name c1)\""
}

cluster() {
  if cluster_up; then return 0; fi
  (
    flock 9
    if cluster_up; then exit 0; fi
    # The root's own lock only while the root is built: a node started
    # under it before file descriptors were closed may still hold it.
    r43_root_ok || (flock -w 600 8 && r43_build_root) 8>"$R43_DIR/lock"
    local n started=""
    for n in $RC_NODES; do rc_configure "$n"; done
    mountpoint -q "$R43_ROOT/proc" || mount -t proc proc "$R43_ROOT/proc"
    # Start the three at once: a node that was in the cluster waits for
    # the others' metadata store before it finishes booting. A node whose
    # VM answers on its distribution port but whose API does not was left
    # with its application stopped (the fault suite does that): start it.
    for n in $RC_NODES; do
      if ! port_open "$(rc_dist "$n")"; then
        started="$started $n"
        inc "$n" rabbitmq-server -detached >/dev/null 2>&1 9>&- || true
      elif ! rc_node_up "$n"; then
        say "starting the RabbitMQ application on $(rc_name "$n")"
        inc "$n" rabbitmqctl -q start_app >/dev/null 2>&1 || true
      fi
    done
    [ -z "$started" ] || say "starting RabbitMQ $R43_VERSION cluster nodes:$started (AMQP 5681-5683, management 15681-15683)"
    for n in $RC_NODES; do
      wait_for 120 "cluster node $(rc_name "$n") (its log: $R43_ROOT/var/lib/rabbitmq/cluster/$n/log/)" rc_node_up "$n"
    done
    rc_running && exit 0
    for n in c2 c3; do
      rc_member "$n" && continue
      say "joining $(rc_name "$n") to $(rc_name c1)"
      inc "$n" rabbitmqctl -q stop_app >/dev/null
      inc "$n" rabbitmqctl -q join_cluster "$(rc_name c1)" >"$R43_DIR/join-$n.log" 2>&1 ||
        die "$(rc_name "$n") could not join $(rc_name c1): $(cat "$R43_DIR/join-$n.log")"
      inc "$n" rabbitmqctl -q start_app >/dev/null
    done
    wait_for 120 "the RabbitMQ $R43_VERSION cluster (three nodes running, management on 15681-15683)" cluster_up
  ) 9>"$(mkdir -p "$R43_DIR" && echo "$R43_DIR/cluster.lock")"
}

stop_cluster() {
  { [ -d "$R43_ROOT/etc/rabbitmq/cluster" ] && mountpoint -q "$R43_ROOT/proc"; } || return 0
  local n p pids=""
  for n in $RC_NODES; do
    if inc "$n" rabbitmq-diagnostics -q ping >/dev/null 2>&1; then
      say "stopping cluster node $(rc_name "$n")"
      inc "$n" rabbitmqctl -q stop >/dev/null 2>&1 &
      pids="$pids $!"
    fi
  done
  for p in $pids; do wait "$p" || true; done
  inc c1 epmd -kill >/dev/null 2>&1 || true
}

# ctl NODE ARGS... runs rabbitmqctl for one of this script's 4.3 nodes:
# the fault suite stops and starts them with it.
ctl() {
  local n=${1:-}
  shift || true
  case "$n" in
    43) in43 rabbitmqctl "$@" ;;
    c1|c2|c3) inc "$n" rabbitmqctl "$@" ;;
    *) die "ctl: expected a node (43, c1, c2 or c3), got '$n'" ;;
  esac
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

# node: the integration tests run rascal, a Node.js library, as a real
# failing consumer (docs/ARCHITECTURE.md §4.12); npm installs it.
node_tools() {
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then return 0; fi
  install_pkgs "Node.js (node and npm, for the rascal integration tests)" "nodejs npm"
}

case "${1:-all}" in
  node) node_tools ;;
  rabbitmq) rabbit ;;
  rabbitmq43) rabbit43 ;;
  postgres) postgres ;;
  cluster)
    cluster
    say "ready: RabbitMQ $R43_VERSION cluster $(rc_name c1), $(rc_name c2), $(rc_name c3) (AMQP 5681-5683, management 15681-15683)"
    exit 0 ;;
  ctl) shift; ctl "$@"; exit ;;
  cluster-stop) stop_cluster; exit 0 ;;
  stop) stop_cluster; stop43; exit 0 ;;
  all) brokers; postgres; node_tools ;;
  *) die "usage: $0 [all|rabbitmq|rabbitmq43|cluster|cluster-stop|postgres|node|stop] | ctl NODE ARGS..." ;;
esac
say "ready: RabbitMQ ${WARREN_TEST_BROKER:-3.10 and 4.3} and PostgreSQL ($PG_HOST)"
