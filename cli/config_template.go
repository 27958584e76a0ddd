package cli

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/config"
)

// renderConfig is the config `config init` writes: one context, shaped
// and commented like config.example.toml, with the optional keys shown
// commented out.
func renderConfig(ans initAnswers) string {
	name := ans.Context
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("# warren configuration, written by `warren config init`. warren looks for")
	w("# --config, then ./warren.toml (read only once trusted with `warren config")
	w("# trust`), then your own $XDG_CONFIG_HOME/warren/config.toml")
	w("# (~/.config/warren/config.toml). Secrets never go in this file: they come")
	w("# from environment variables (or files) whose names are given here; only")
	w("# your own config, or a file named with --config, may name them.")
	w("# `warren config check` validates this file and tries every connection;")
	w("# config.example.toml documents every key.")
	w("")
	w("# The context used when --context is not given.")
	w("current_context = %s", config.Quote(name))
	w("")
	w("[contexts.%s]", name)
	w("# AMQP endpoint (amqp:// or amqps://). No password here: see password_env.")
	w("amqp_url = %s", config.Quote(ans.AMQPURL))
	w("# Management HTTP API (http:// or https://). Enable it on the broker with")
	w("# `rabbitmq-plugins enable rabbitmq_management`.")
	w("management_url = %s", config.Quote(ans.ManagementURL))
	w("# The broker's Prometheus endpoint, read for a fast first screen on a large")
	w("# broker (default: port 15692 beside a management API on 15672; \"off\": none).")
	w("# metrics_url = \"http://127.0.0.1:15692\"")
	w("username = %s", config.Quote(ans.Username))
	if ans.project {
		// A project's file may not name where a secret comes from.
		w("# The password comes from %s: export it before running warren. This", config.LocalPasswordEnv)
		w("# file may not name another source (password_env, password_file); your own")
		w("# config may.")
	} else {
		w("# The environment variable holding the password: export it before running warren.")
		w("password_env = %s", config.Quote(ans.PasswordEnv))
		w("# password_file = \"/run/secrets/rabbitmq\"  # alternative to password_env")
	}
	w("# dev | staging | prod: prod shows a red banner and asks to type queue name and count")
	w("environment = %s", config.Quote(ans.Environment))
	w("read_only = false               # true removes the action keys and refuses changing commands")
	w("refresh = \"2s\"                  # how often the views refresh (at least 200ms)")
	w("# consumer_timeout = \"30m\"      # the broker's consumer_timeout, when rabbitmq.conf changes it: a browse gives its messages back before it")
	w("# vhost = \"/\"                   # start the overview on one vhost (default: all)")
	w("# operator = \"alice\"            # name in the audit log (default: --operator, then $USER)")
	w("confirm_threshold = 100         # actions on more messages than this need the queue name and count typed")
	w("audit = \"file\"                  # \"file\" (default path ~/.local/state/warren/audit.jsonl), \"file:PATH\", \"postgres\" or \"postgres:TABLE\"")
	w("# audit_dsn_env = \"WARREN_AUDIT_DSN\" # with audit = \"postgres\": variable holding the team store's DSN")
	w("")
	w("# For amqps:// and https://:")
	w("# [contexts.%s.tls]", name)
	w("# ca_file = \"/etc/warren/ca.pem\"  # PEM file of the CA that signed the broker's certificate")
	w("# cert_file = \"\"                  # client certificate (PEM), with key_file")
	w("# key_file = \"\"")
	w("")
	w("# Per-queue knowledge; every key is optional.")
	w("# [[contexts.%s.queues]]", name)
	w("# name = \"orders\"")
	w("# logical_id = \"header:event_id\"  # message_id | header:NAME | json:PATH (e.g. json:order.id)")
	w("# attempts_header = \"x-retry-count\" # application header counting attempts")
	w("# dlq = \"orders.dlq\"              # override the DLQ found from x-dead-letter-exchange and bindings")
	w("# quarantine = \"orders.parking\"   # parking queue for quarantined dead letters (default <dlq>.quarantine)")
	w("# The consumer's inbox (idempotency) table: read-only lookups tell which")
	w("# dead letters were already applied.")
	w("# inbox = { dsn_env = \"ORDERS_DB\", table = \"inbox\", id_column = \"event_id\", time_column = \"processed_at\" }")
	return b.String()
}
