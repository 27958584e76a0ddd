package mgmt

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestHeadTimestampSaysWhyItIsUnknown(t *testing.T) {
	tests := []struct {
		name       string
		json       string
		withStats  bool
		wantTime   bool
		wantReason string
	}{
		{"classic with timestamp", `{"type":"classic","consumers":0,"messages_ready":3,"head_message_timestamp":1700000000}`, true, true, ""},
		{"classic without timestamp", `{"type":"classic","consumers":0,"messages_ready":3,"head_message_timestamp":null}`, true, false, "no timestamp property"},
		{"classic empty", `{"type":"classic","consumers":0,"messages_ready":0}`, true, false, "no ready message"},
		{"classic not fetched", `{"type":"classic","messages_ready":3}`, false, false, "not fetched"},
		{"classic whose statistics the broker has not emitted yet", `{"type":"classic","messages_ready":3}`, true, false, "not fetched"},
		{"quorum", `{"type":"quorum","consumers":0,"messages_ready":3}`, true, false, "quorum"},
		{"stream", `{"type":"stream","consumers":0,"messages_ready":3}`, true, false, "stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r rawQueue
			if err := json.Unmarshal([]byte(tt.json), &r); err != nil {
				t.Fatal(err)
			}
			q := r.queue(tt.withStats)
			if (q.HeadMessageTimestamp != nil) != tt.wantTime {
				t.Fatalf("timestamp = %v, want set=%v", q.HeadMessageTimestamp, tt.wantTime)
			}
			if tt.wantTime && !q.HeadMessageTimestamp.Equal(time.Unix(1700000000, 0)) {
				t.Fatalf("timestamp = %v", q.HeadMessageTimestamp)
			}
			if !strings.Contains(q.OldestUnknownReason, tt.wantReason) {
				t.Fatalf("reason = %q, want it to contain %q", q.OldestUnknownReason, tt.wantReason)
			}
		})
	}
}

func TestOlderBrokersEmptyListsDecodeAsEmptyObjects(t *testing.T) {
	var r rawQueue
	if err := json.Unmarshal([]byte(`{"name":"q","arguments":[],"effective_policy_definition":[],"exclusive":null}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Arguments != nil || r.EffectivePolicy != nil {
		t.Fatalf("arguments %v, policy %v", r.Arguments, r.EffectivePolicy)
	}
}

func TestRatesFromCounterSamples(t *testing.T) {
	got := rates(
		[]rawSample{{Sample: 100, Timestamp: 20000}, {Sample: 0, Timestamp: 0}, {Sample: 50, Timestamp: 10000}},
		[]rawSample{{Sample: 10, Timestamp: 20000}, {Sample: 0, Timestamp: 0}, {Sample: 0, Timestamp: 10000}},
	)
	want := []float64{5, 6}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Value != want[i] {
			t.Fatalf("rate %d = %v, want %v (all: %v)", i, got[i].Value, want[i], got)
		}
	}
}

func TestUnackedAllowedSumsPerConsumerPrefetch(t *testing.T) {
	chans := []domain.Channel{{Name: "a"}, {Name: "b"}, {Name: "g", GlobalPrefetch: 50}}
	tests := []struct {
		name          string
		cons          []domain.Consumer
		wantAllowed   int64
		wantUnlimited bool
	}{
		{"three consumers at prefetch 20", []domain.Consumer{{Channel: "a", AckRequired: true, PrefetchCount: 20},
			{Channel: "a", AckRequired: true, PrefetchCount: 20}, {Channel: "b", AckRequired: true, PrefetchCount: 20}}, 60, false},
		{"auto-ack consumers hold nothing", []domain.Consumer{{Channel: "a", AckRequired: false}}, 0, false},
		{"no prefetch is unlimited", []domain.Consumer{{Channel: "a", AckRequired: true}, {Channel: "b", AckRequired: true, PrefetchCount: 5}}, 5, true},
		{"global prefetch counts once per channel", []domain.Consumer{{Channel: "g", AckRequired: true}, {Channel: "g", AckRequired: true}}, 50, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed, unlimited := unackedAllowed(tt.cons, chans)
			if allowed != tt.wantAllowed || unlimited != tt.wantUnlimited {
				t.Fatalf("got %d, %v; want %d, %v", allowed, unlimited, tt.wantAllowed, tt.wantUnlimited)
			}
		})
	}
}

func n(v int64) *int64 { return &v }

// A broker with rates_mode = none lists no rate details: its queues'
// rates are unknown, not 0, so a busy queue is not judged stalled.
func TestRatesAreUnknownWhenTheBrokerCollectsNone(t *testing.T) {
	busy := domain.Queue{Messages: 90, Ready: 90, Consumers: 3, HasRates: true}
	if busy.Drain().Movement != domain.Stalled {
		t.Fatalf("the premise: a busy queue read with rates of 0 is judged %v", busy.Drain().Movement)
	}
	qs := []domain.Queue{busy}
	withoutRates(qs, "basic")
	if !qs[0].HasRates {
		t.Fatal("rates_mode basic lost the rates")
	}
	withoutRates(qs, "none")
	if qs[0].HasRates || qs[0].Drain().Movement != domain.NoRates {
		t.Fatalf("rates_mode none: %+v judged %v, want rates unknown", qs[0], qs[0].Drain().Movement)
	}
	if _, ok := qs[0].DrainETA(); ok {
		t.Fatal("rates_mode none still gives a drain ETA")
	}
}

// queue builds a queue whose dead-lettering is resolved from args, as
// the domain package's tests do.
func queue(vhost, name, typ string, args map[string]any) domain.Queue {
	q := domain.Queue{Vhost: vhost, Name: name, Type: typ, Arguments: args}
	q.ResolveDeadLettering()
	return q
}

func dlx(x, rk string) map[string]any {
	a := map[string]any{"x-dead-letter-exchange": x}
	if rk != "" {
		a["x-dead-letter-routing-key"] = rk
	}
	return a
}

func TestPairDLQsFollowsTheDeadLetterExchange(t *testing.T) {
	const v = "v"
	topo := domain.Topology{
		Exchanges: map[domain.ExchangeRef]string{
			{Vhost: v, Name: ""}: "direct", {Vhost: v, Name: "dlx.direct"}: "direct", {Vhost: v, Name: "dlx.fanout"}: "fanout",
			{Vhost: v, Name: "dlx.topic"}: "topic", {Vhost: v, Name: "dlx.hop"}: "fanout", {Vhost: v, Name: "dlx.empty"}: "direct", {Vhost: v, Name: "dlx.ae"}: "direct",
		},
		Alternates: map[domain.ExchangeRef]string{{Vhost: v, Name: "dlx.ae"}: "dlx.fanout"},
		Bindings: map[domain.ExchangeRef][]domain.Binding{
			{Vhost: v, Name: "dlx.direct"}: {{Source: "dlx.direct", Destination: "orders.dlq", RoutingKey: "orders"},
				{Source: "dlx.direct", Destination: "other.dlq", RoutingKey: "other"}},
			{Vhost: v, Name: "dlx.fanout"}: {{Source: "dlx.fanout", Destination: "all.dead"}},
			{Vhost: v, Name: "dlx.topic"}:  {{Source: "dlx.topic", Destination: "eu.dlq", RoutingKey: "*.eu"}},
			{Vhost: v, Name: "dlx.hop"}:    {{Source: "dlx.hop", Destination: "dlx.direct", ToExchange: true}},
		},
	}
	tests := []struct {
		name string
		q    domain.Queue
		want string // DLQ name, "" for none
	}{
		{"direct exchange with routing key", queue(v, "orders", "classic", dlx("dlx.direct", "orders")), "orders.dlq"},
		{"direct exchange, original key: prefer the queue's own DLQ name", queue(v, "orders", "classic", dlx("dlx.direct", "")), "orders.dlq"},
		{"fanout exchange", queue(v, "payments", "classic", dlx("dlx.fanout", "")), "all.dead"},
		{"topic exchange matching the key", queue(v, "billing", "classic", dlx("dlx.topic", "billing.eu")), "eu.dlq"},
		{"topic exchange not matching", queue(v, "billing", "classic", dlx("dlx.topic", "billing.us")), ""},
		{"exchange-to-exchange binding", queue(v, "other", "classic", dlx("dlx.hop", "other")), "other.dlq"},
		{"default exchange names the queue", queue(v, "mail", "classic", dlx("", "mail.dlq")), "mail.dlq"},
		{"missing exchange", queue(v, "lost", "classic", dlx("nope", "x")), ""},
		{"exchange without bindings", queue(v, "lost", "classic", dlx("dlx.empty", "x")), ""},
		{"alternate exchange catches the unrouted", queue(v, "x", "classic", dlx("dlx.ae", "zzz")), "all.dead"},
		{"no DLX", queue(v, "plain", "classic", nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs := []domain.Queue{tt.q}
			for _, n := range []string{"orders.dlq", "other.dlq", "all.dead", "eu.dlq", "mail.dlq"} {
				qs = append(qs, domain.Queue{Vhost: v, Name: n, Type: "classic", Messages: 4})
			}
			pairDLQs(qs, &topo, nil)
			got := ""
			if qs[0].DLQ != nil {
				got = qs[0].DLQ.Name
			}
			if got != tt.want {
				t.Fatalf("DLQ = %q, want %q", got, tt.want)
			}
			if got == "" {
				return
			}
			if qs[0].DLQMessages != 4 {
				t.Fatalf("DLQMessages = %d, want the DLQ's depth 4", qs[0].DLQMessages)
			}
			for _, dq := range qs[1:] {
				if dq.Name == got && (len(dq.DLQOf) != 1 || dq.DLQOf[0] != qs[0].Ref()) {
					t.Fatalf("%s.DLQOf = %v, want [%v]", got, dq.DLQOf, qs[0].Ref())
				}
			}
		})
	}
}

func TestPairDLQsConfigOverrideWins(t *testing.T) {
	topo := domain.Topology{Exchanges: map[domain.ExchangeRef]string{{Vhost: "v", Name: "dlx"}: "fanout"},
		Bindings: map[domain.ExchangeRef][]domain.Binding{{Vhost: "v", Name: "dlx"}: {{Source: "dlx", Destination: "a.dead"}}}}
	qs := []domain.Queue{queue("v", "a", "classic", dlx("dlx", "")), {Vhost: "v", Name: "a.dead"}, {Vhost: "v", Name: "a.parking", Messages: 2}}
	pairDLQs(qs, &topo, []domain.DLQOverride{{Queue: "a", DLQ: "a.parking"}})
	if qs[0].DLQ == nil || qs[0].DLQ.Name != "a.parking" || qs[0].DLQMessages != 2 || !qs[2].IsDLQ() || qs[1].IsDLQ() {
		t.Fatalf("override not applied: %+v", qs)
	}
}

func TestPairDLQsRetryLoopIsNotADLQ(t *testing.T) {
	topo := domain.Topology{
		Exchanges: map[domain.ExchangeRef]string{{Vhost: "v", Name: "work.retry"}: "fanout", {Vhost: "v", Name: "work.back"}: "fanout"},
		Bindings: map[domain.ExchangeRef][]domain.Binding{
			{Vhost: "v", Name: "work.retry"}: {{Source: "work.retry", Destination: "work.wait"}},
			{Vhost: "v", Name: "work.back"}:  {{Source: "work.back", Destination: "work"}},
		},
	}
	work := queue("v", "work", "classic", dlx("work.retry", ""))
	wait := queue("v", "work.wait", "classic", dlx("work.back", ""))
	wait.Arguments["x-message-ttl"] = float64(1000)
	qs := []domain.Queue{work, wait}
	pairDLQs(qs, &topo, nil)
	if qs[1].DLQ != nil || qs[1].RetryTarget == nil || qs[1].RetryTarget.Name != "work" {
		t.Fatalf("wait queue: DLQ=%v RetryTarget=%v, want no DLQ and retries back to work", qs[1].DLQ, qs[1].RetryTarget)
	}
	if qs[0].IsDLQ() {
		t.Fatalf("work queue counted as a DLQ of its own retry queue: DLQOf=%v", qs[0].DLQOf)
	}
	if qs[0].DLQ == nil || qs[0].DLQ.Name != "work.wait" {
		t.Fatalf("work queue's dead letters go to %v, want work.wait", qs[0].DLQ)
	}
}

func TestMarkParkingFindsEachDLQsParkingQueue(t *testing.T) {
	dlq := domain.Queue{Vhost: "v", Name: "orders.dlq", DLQOf: []domain.QueueRef{{Vhost: "v", Name: "orders"}}}
	qs := []domain.Queue{
		dlq,
		{Vhost: "v", Name: "orders.dlq.quarantine"}, // the DLQ's default parking queue
		{Vhost: "v", Name: "jobs.quarantine"},       // no DLQ called jobs: an ordinary queue
		{Vhost: "w", Name: "orders.dlq.quarantine"}, // another vhost, where orders.dlq is no DLQ
		{Vhost: "v", Name: "held-for-review"},       // named by config
		{Vhost: "w", Name: "held-for-review"},       // config names it in vhost v only
		{Vhost: "x", Name: "parked"},                // config names it in any vhost
	}
	qs[1].Parking, qs[2].Parking = false, true // stale marks are reset
	markParking(qs, []domain.QueueRef{{Vhost: "v", Name: "held-for-review"}, {Name: "parked"}})
	want := []bool{false, true, false, false, true, false, true}
	for i, q := range qs {
		if q.Parking != want[i] {
			t.Errorf("%s/%s: parking %v, want %v", q.Vhost, q.Name, q.Parking, want[i])
		}
	}
}

func TestSourcesOfAParkingQueueAreItsDLQs(t *testing.T) {
	orders := domain.QueueRef{Vhost: "v", Name: "orders"}
	s := &domain.Snapshot{Queues: []domain.Queue{
		{Vhost: "v", Name: "orders"},
		{Vhost: "v", Name: "orders.dlq", DLQOf: []domain.QueueRef{orders}},
		{Vhost: "v", Name: "orders.dlq.quarantine", Parking: true},
		{Vhost: "v", Name: "held", Parking: true},
	}}
	for _, tc := range []struct {
		name string
		want []domain.QueueRef
	}{
		{"orders.dlq", []domain.QueueRef{orders}},
		{"orders.dlq.quarantine", []domain.QueueRef{orders}},
		{"held", nil},
		{"orders", nil},
		{"gone", nil},
	} {
		if got := s.Sources(domain.QueueRef{Vhost: "v", Name: tc.name}); !slices.Equal(got, tc.want) {
			t.Errorf("Sources(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
