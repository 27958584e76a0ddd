package mgmt

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

func with(args map[string]any, more map[string]any) map[string]any {
	out := maps.Clone(args)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, more)
	return out
}

func consumed(q domain.Queue, n int) domain.Queue {
	q.Consumers, q.HasRates = n, true
	return q
}

func TestLintChecks(t *testing.T) {
	const v = "v"
	topo := domain.Topology{
		Exchanges: map[domain.ExchangeRef]string{{Vhost: v, Name: ""}: "direct", {Vhost: v, Name: "dlx"}: "direct", {Vhost: v, Name: "unbound"}: "fanout"},
		Bindings: map[domain.ExchangeRef][]domain.Binding{
			{Vhost: v, Name: "dlx"}: {{Source: "dlx", Destination: "dead", RoutingKey: "dead"}},
		},
	}
	healthyDLX := dlx("dlx", "dead")
	tests := []struct {
		name    string
		version string
		queues  []domain.Queue
		want    []string // "check queue"
	}{
		{"healthy topology is silent", "3.10.8", []domain.Queue{
			queue(v, "orders", "classic", healthyDLX),
			queue(v, "payments", "quorum", with(healthyDLX, map[string]any{"x-delivery-limit": 5.0})),
			{Vhost: v, Name: "dead", Type: "classic"},
			queue(v, "capped", "classic", map[string]any{"x-max-length": 10.0, "x-overflow": "reject-publish"}),
		}, nil},
		{"missing exchange", "3.10.8", []domain.Queue{queue(v, "q", "classic", dlx("gone", "dead")), {Vhost: v, Name: "dead"}},
			[]string{"dlx-missing q"}},
		{"exchange without bindings", "3.10.8", []domain.Queue{queue(v, "q", "classic", dlx("unbound", ""))},
			[]string{"dlx-unroutable q"}},
		{"no binding for the routing key", "3.10.8", []domain.Queue{queue(v, "q", "classic", dlx("dlx", "elsewhere")), {Vhost: v, Name: "dead"}},
			[]string{"dlx-unroutable q"}},
		{"default exchange to a missing queue", "3.10.8", []domain.Queue{queue(v, "q", "classic", dlx("", "nowhere"))},
			[]string{"dlx-unroutable q"}},
		{"at-least-once without reject-publish", "3.10.8", []domain.Queue{
			queue(v, "q", "quorum", with(healthyDLX, map[string]any{"x-dead-letter-strategy": "at-least-once", "x-delivery-limit": 3.0})),
			{Vhost: v, Name: "dead", Type: "classic"}},
			[]string{"dlx-at-least-once-overflow q"}},
		{"at-least-once with reject-publish is fine", "3.10.8", []domain.Queue{
			queue(v, "q", "quorum", with(healthyDLX, map[string]any{"x-dead-letter-strategy": "at-least-once",
				"x-overflow": "reject-publish", "x-delivery-limit": 3.0})),
			{Vhost: v, Name: "dead", Type: "classic"}}, nil},
		{"length limit with drop-head", "3.10.8", []domain.Queue{
			queue(v, "q", "classic", with(healthyDLX, map[string]any{"x-max-length": 10.0, "x-overflow": "drop-head"})),
			{Vhost: v, Name: "dead", Type: "classic"}},
			[]string{"overflow-drop-head q"}},
		{"quorum DLQ with a delivery limit", "3.10.8", []domain.Queue{
			queue(v, "q", "classic", healthyDLX),
			queue(v, "dead", "quorum", map[string]any{"x-delivery-limit": 5.0})},
			[]string{"dlq-quorum-delivery-limit dead"}},
		{"quorum DLQ gets the default limit on 4.0", "4.0.1", []domain.Queue{
			queue(v, "q", "classic", healthyDLX),
			queue(v, "dead", "quorum", nil)},
			[]string{"dlq-quorum-delivery-limit dead"}},
		{"a quorum DLQ with a delivery limit browses for free on 4.3", "4.3.6", []domain.Queue{
			queue(v, "q", "classic", healthyDLX),
			queue(v, "dead", "quorum", map[string]any{"x-delivery-limit": 5.0})},
			nil},
		{"a quorum DLQ of a quorum origin whose dead letters carry its limit, on 4.3", "4.3.6", []domain.Queue{
			queue(v, "q", "quorum", healthyDLX),
			queue(v, "dead", "quorum", nil)},
			[]string{"dlq-quorum-delivery-limit dead"}},
		{"a quorum DLQ whose limit is above what its quorum origin's dead letters carry, on 4.3", "4.3.6", []domain.Queue{
			queue(v, "q", "quorum", with(healthyDLX, map[string]any{"x-delivery-limit": 5.0})),
			queue(v, "dead", "quorum", nil)},
			nil},
		{"DLQ with consumers", "3.10.8", []domain.Queue{
			queue(v, "q", "classic", healthyDLX),
			{Vhost: v, Name: "dead", Type: "classic", Consumers: 2, HasRates: true}},
			[]string{"dlq-has-consumers dead"}},
		{"quorum queue with DLX and no delivery limit", "3.13.7", []domain.Queue{
			queue(v, "q", "quorum", healthyDLX),
			{Vhost: v, Name: "dead", Type: "classic"}},
			[]string{"quorum-no-delivery-limit q"}},
		{"4.0 default delivery limit satisfies the check", "4.0.1", []domain.Queue{
			queue(v, "q", "quorum", healthyDLX),
			{Vhost: v, Name: "dead", Type: "classic"}}, nil},
		{"quorum queue with the 4.0 default limit and no DLX drops", "4.3.6", []domain.Queue{queue(v, "q", "quorum", nil)},
			[]string{"quorum-limit-no-dlx q"}},
		{"quorum queue with a limit and no DLX drops", "3.10.8", []domain.Queue{queue(v, "q", "quorum", map[string]any{"x-delivery-limit": 5.0})},
			[]string{"quorum-limit-no-dlx q"}},
		{"quorum queue without limit or DLX before 4.0 is silent", "3.13.7", []domain.Queue{queue(v, "q", "quorum", nil)}, nil},
		{"quorum queue with the limit turned off is silent", "4.3.6", []domain.Queue{queue(v, "q", "quorum", map[string]any{"x-delivery-limit": -1.0})}, nil},
		{"retry loop queues are not DLQs", "3.10.8", []domain.Queue{
			consumed(queue(v, "work", "classic", dlx("", "wait")), 3),
			queue(v, "wait", "classic", with(dlx("", "work"), map[string]any{"x-message-ttl": 5000.0}))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: tt.version}, Queues: tt.queues, Topology: topo}
			pairDLQs(s.Queues, &s.Topology, nil)
			var got []string
			for _, f := range domain.Lint(s) {
				got = append(got, f.Check+" "+f.Queue)
				if f.Vhost != v || f.Message == "" || (f.Severity != domain.SeverityError && f.Severity != domain.SeverityWarning) {
					t.Errorf("malformed finding %+v", f)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("findings = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLintPutsErrorsFirstAndEveryCheckIsDescribed(t *testing.T) {
	s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "3.10.8"}, Queues: []domain.Queue{
		queue("v", "a", "classic", map[string]any{"x-max-length": 1.0}),
		queue("v", "b", "classic", dlx("gone", "")),
	}}
	pairDLQs(s.Queues, &s.Topology, nil)
	fs := domain.Lint(s)
	if len(fs) != 2 || fs[0].Severity != domain.SeverityError || fs[1].Severity != domain.SeverityWarning {
		t.Fatalf("order: %+v", fs)
	}
	if !strings.Contains(fs[1].Message, "lost") {
		t.Fatalf("drop-head without DLX should say messages are lost: %q", fs[1].Message)
	}
	ids := map[string]bool{}
	for _, c := range domain.Checks {
		ids[c.ID] = true
	}
	for _, id := range []string{domain.CheckDLXMissing, domain.CheckDLXUnroutable, domain.CheckAtLeastOnce, domain.CheckDropHead, domain.CheckDLQDeliveryLim, domain.CheckDLQConsumers, domain.CheckNoDeliveryLimit, domain.CheckLimitNoDLX, domain.CheckDLXBacklog, domain.CheckDLXCycle} {
		if !ids[id] {
			t.Errorf("check %s is not in Checks", id)
		}
	}
}

func TestLintSaysWhyAQuorumQueueHoldsDeadLetters(t *testing.T) {
	const v = "v"
	held := func(q domain.Queue, n int64) domain.Queue {
		q.DLXHeld = &n
		return q
	}
	alo := map[string]any{"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish", "x-delivery-limit": 3.0}
	topo := domain.Topology{
		Exchanges: map[domain.ExchangeRef]string{{Vhost: v, Name: ""}: "direct", {Vhost: v, Name: "dlx"}: "direct", {Vhost: v, Name: "unbound"}: "fanout"},
		Bindings:  map[domain.ExchangeRef][]domain.Binding{{Vhost: v, Name: "dlx"}: {{Source: "dlx", Destination: "dead", RoutingKey: "dead"}}},
	}
	full := queue(v, "dead", "classic", map[string]any{"x-max-length": 2.0, "x-overflow": "reject-publish"})
	full.Messages = 2
	tests := []struct {
		name   string
		queues []domain.Queue
		want   string
	}{
		{"target full", []domain.Queue{held(queue(v, "q", "quorum", with(dlx("dlx", "dead"), alo)), 7), full},
			"7 dead letters are held by this queue until the dead-letter target confirms them: the target dead is full (2 of max-length 2, overflow=reject-publish)"},
		{"exchange missing", []domain.Queue{held(queue(v, "q", "quorum", with(dlx("gone", "dead"), alo)), 3)},
			`the dead-letter exchange "gone" does not exist`},
		{"routes nowhere", []domain.Queue{held(queue(v, "q", "quorum", with(dlx("unbound", ""), alo)), 3)},
			"routes them nowhere"},
		{"target not confirming", []domain.Queue{held(queue(v, "q", "quorum", with(dlx("dlx", "dead"), alo)), 2), queue(v, "dead", "classic", nil)},
			"the target has not confirmed them yet"},
		{"one held", []domain.Queue{held(queue(v, "q", "quorum", with(dlx("dlx", "dead"), alo)), 1), queue(v, "dead", "classic", nil)},
			"1 dead letter is held by this queue until the dead-letter target confirms it: the target has not confirmed it yet (slow, blocked by an alarm, or refusing it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "4.3.6"}, Queues: tt.queues, Topology: topo}
			pairDLQs(s.Queues, &s.Topology, nil)
			var msg []string
			for _, f := range domain.Lint(s) {
				if f.Check == domain.CheckDLXBacklog && f.Queue == "q" {
					msg = append(msg, f.Message)
				}
			}
			if len(msg) != 1 || !strings.Contains(msg[0], tt.want) {
				t.Fatalf("dlx-backlog findings = %q, want one saying %q", msg, tt.want)
			}
		})
	}
	s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "4.3.6"}, Queues: []domain.Queue{held(queue(v, "q", "quorum", with(dlx("dlx", "dead"), alo)), 0), queue(v, "dead", "classic", nil)}, Topology: topo}
	pairDLQs(s.Queues, &s.Topology, nil)
	for _, f := range domain.Lint(s) {
		if f.Check == domain.CheckDLXBacklog {
			t.Errorf("an empty backlog gave %+v", f)
		}
	}
}

// A name with control characters is escaped once, where the finding is
// shown, not quoted into escapes first and escaped again.
func TestLintNamesAHostileExchangeEscapedOnce(t *testing.T) {
	s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "3.10.8"}, Queues: []domain.Queue{
		queue("v", "b", "classic", dlx("gone\x1b[2J", "")),
	}}
	pairDLQs(s.Queues, &s.Topology, nil)
	fs := domain.Lint(s)
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", fs)
	}
	if got := sanitize.Text(fs[0].Message); !strings.Contains(got, `exchange "gone\x1b[2J" does not exist`) {
		t.Fatalf("shown as %q", got)
	}
}

// An at-least-once quorum queue keeps what its dead-letter exchange
// cannot route: lint says so, not that the dead letters are dropped.
func TestLintSaysAnAtLeastOnceQueueKeepsWhatItCannotRoute(t *testing.T) {
	s := &domain.Snapshot{Overview: domain.Overview{RabbitMQVersion: "4.3.6"}, Queues: []domain.Queue{
		queue("v", "alo", "quorum", with(dlx("gone", ""), map[string]any{"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish", "x-delivery-limit": 3.0})),
		queue("v", "amo", "quorum", with(dlx("gone", ""), map[string]any{"x-delivery-limit": 3.0})),
	}}
	pairDLQs(s.Queues, &s.Topology, nil)
	said := map[string]string{}
	for _, f := range domain.Lint(s) {
		if f.Check == domain.CheckDLXMissing {
			said[f.Queue] = f.Message
		}
	}
	if m := said["alo"]; !strings.Contains(m, "stay in this queue (at-least-once)") || strings.Contains(m, "dropped") {
		t.Errorf("at-least-once: %q", m)
	}
	if m := said["amo"]; !strings.Contains(m, "dropped silently") {
		t.Errorf("at-most-once: %q", m)
	}
}
