package demo

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
)

// Scene describes what Seed built, in terms warren's config understands.
type Scene struct {
	Vhost         string
	AMQPURL       string // no credentials: the config names the user and PasswordEnv
	ManagementURL string
	Username      string
	Policy        string // the policy that pairs payments with payments.dlq
	Queues        []Queue
	DLQs          []DLQ
	Inbox         *Inbox // nil when PostgreSQL was skipped or unreachable
	// Audit is the config's audit store; "file" (the operator's default
	// log) when empty. warren demo keeps the demo's actions in a log of
	// their own.
	Audit string
}

// Queue is one queue of the scene and what warren should know about it.
type Queue struct {
	Name           string
	Type           string // classic or quorum
	Role           string
	DLQ            string // where the broker dead-letters its messages in the end
	PairedBy       string // arguments, policy, or routing (override needed)
	LogicalID      string // message_id | header:NAME | json:PATH; "" = no entry
	AttemptsHeader string
	HasInbox       bool
}

// DLQ is a dead-letter queue and the dead letters Seed left in it, per
// x-death reason.
type DLQ struct {
	Name    string
	Reasons map[string]int
}

// Total is the number of dead letters Seed left in the DLQ.
func (d DLQ) Total() int {
	n := 0
	for _, c := range d.Reasons {
		n += c
	}
	return n
}

// Inbox is the consumers' idempotency table.
type Inbox struct {
	Table, IDColumn, TimeColumn string
	DSNEnv                      string
	Applied                     []string // event IDs in orders.dlq already processed
}

// Environment variables the rendered config reads secrets from.
const (
	PasswordEnv = "WARREN_PASSWORD"
	InboxDSNEnv = "WARREN_DEMO_DSN"
)

const (
	inboxTable  = "warren_demo_inbox"
	ordersID    = "header:event_id"
	paymentsID  = "json:event_id"
	retryHeader = "x-retry-count"
)

func sceneQueues() []Queue {
	return []Queue{
		{qOrders, "classic", "orders flow; retries through orders.retry", qOrdersDLQ, "routing", ordersID, retryHeader, true},
		{qOrdersRetry, "classic", "retry tier 1 (TTL 250 ms)", "", "", "", "", false},
		{qOrdersRetry2, "classic", "retry tier 2 (TTL 500 ms)", "", "", "", "", false},
		{qPendingPayment, "classic", "expires unpaid orders (queue TTL)", qOrdersDLQ, "arguments", ordersID, retryHeader, false},
		{qStatus, "classic", "bounded status feed (max length 5)", qOrdersDLQ, "arguments", ordersID, retryHeader, false},
		{qInvoicing, "quorum", "delivery limit 2, crashing renderer", qOrdersDLQ, "arguments", ordersID, retryHeader, false},
		{qOrdersDLQ, "classic", "DLQ: rejected, expired, maxlen, delivery_limit", "", "", ordersID, retryHeader, true},
		{qPayments, "classic", "per-message expiration", qPaymentsDLQ, "policy", paymentsID, retryHeader, false},
		{qPaymentsDLQ, "classic", "DLQ: expired, logical-ID fallbacks", "", "", paymentsID, retryHeader, false},
		{qShipping, "classic", "slow consumers: 3 × prefetch 20", "", "", "", "", false},
		{qEmail, "classic", "growing: published faster than consumed", "", "", "", "", false},
		{qReindex, "classic", "draining a backlog in batches", "", "", "", "", false},
	}
}

func newScene(o Options, dead []outgoing) *Scene {
	s := &Scene{
		Vhost:         o.Vhost,
		AMQPURL:       configAMQPURL(o.AMQPURL, o.Vhost),
		ManagementURL: withoutUserinfo(o.ManagementURL),
		Username:      o.Username,
		Policy:        paymentsPolicy,
		Queues:        sceneQueues(),
	}
	for _, name := range []string{qOrdersDLQ, qPaymentsDLQ, qShipmentsErr, qBillingDLQ} {
		s.DLQs = append(s.DLQs, DLQ{Name: name, Reasons: expected(dead)[name]})
	}
	return s
}

// configAMQPURL is the broker's address with the vhost as its path and no
// credentials.
func configAMQPURL(raw, vhost string) string {
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return ""
	}
	u := url.URL{
		Scheme:  uri.Scheme,
		Host:    net.JoinHostPort(uri.Host, strconv.Itoa(uri.Port)),
		Path:    "/" + vhost,
		RawPath: "/" + url.PathEscape(vhost),
	}
	return u.String()
}

func withoutUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// ConfigTOML renders a warren config with one context, "demo", that opens
// on the scene's vhost and scopes its queue entries to it. Secrets are not
// inline: the password comes from WARREN_PASSWORD and the inbox DSN from
// WARREN_DEMO_DSN.
func (s *Scene) ConfigTOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# warren demo scene in vhost %s.\n", config.Quote(s.Vhost))
	fmt.Fprintf(&b, "# Secrets are read from the environment: %s", PasswordEnv)
	if s.Inbox != nil {
		fmt.Fprintf(&b, " and %s (inbox DSN)", s.Inbox.DSNEnv)
	}
	b.WriteString(".\ncurrent_context = \"demo\"\n\n[contexts.demo]\n")
	kv(&b, "amqp_url", s.AMQPURL)
	kv(&b, "management_url", s.ManagementURL)
	kv(&b, "username", s.Username)
	kv(&b, "password_env", PasswordEnv)
	kv(&b, "environment", "dev")
	b.WriteString("read_only = false\n")
	kv(&b, "refresh", "2s")
	kv(&b, "vhost", s.Vhost)
	audit := s.Audit
	if audit == "" {
		audit = "file"
	}
	kv(&b, "audit", audit)
	for _, q := range s.Queues {
		if q.LogicalID == "" {
			continue
		}
		fmt.Fprintf(&b, "\n# %s\n[[contexts.demo.queues]]\n", q.Role)
		kv(&b, "name", q.Name)
		kv(&b, "vhost", s.Vhost)
		kv(&b, "logical_id", q.LogicalID)
		kv(&b, "attempts_header", q.AttemptsHeader)
		if q.PairedBy == "routing" {
			kv(&b, "dlq", q.DLQ)
		}
		if q.HasInbox && s.Inbox != nil {
			fmt.Fprintf(&b, "inbox = { dsn_env = %s, table = %s, id_column = %s, time_column = %s }\n",
				config.Quote(s.Inbox.DSNEnv), config.Quote(s.Inbox.Table), config.Quote(s.Inbox.IDColumn), config.Quote(s.Inbox.TimeColumn))
		}
	}
	return b.String()
}

func kv(b *strings.Builder, key, value string) {
	fmt.Fprintf(b, "%s = %s\n", key, config.Quote(value))
}
