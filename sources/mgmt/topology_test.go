package mgmt

import (
	"slices"
	"testing"
)

func TestTopicMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"orders.*", "orders.created", true},
		{"orders.*", "orders.created.eu", false},
		{"orders.#", "orders", true},
		{"orders.#", "orders.created.eu", true},
		{"#", "anything.at.all", true},
		{"*.created", "orders.created", true},
		{"*.created", "created", false},
		{"#.eu", "orders.created.eu", true},
		{"#.#.#.#.#.#.#.#.x", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.y", false},
		{"orders.created", "orders.created", true},
		{"orders.created", "orders.deleted", false},
	}
	for _, tt := range tests {
		if got := TopicMatch(tt.pattern, tt.key); got != tt.want {
			t.Errorf("TopicMatch(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
}

// queue builds a queue whose dead-lettering is resolved from args.
func queue(vhost, name, typ string, args map[string]any) Queue {
	q := Queue{Vhost: vhost, Name: name, Type: typ, Arguments: args}
	q.resolveDeadLettering()
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
	topo := Topology{
		Exchanges: map[ExchangeRef]string{
			{v, ""}: "direct", {v, "dlx.direct"}: "direct", {v, "dlx.fanout"}: "fanout",
			{v, "dlx.topic"}: "topic", {v, "dlx.hop"}: "fanout", {v, "dlx.empty"}: "direct", {v, "dlx.ae"}: "direct",
		},
		Alternates: map[ExchangeRef]string{{v, "dlx.ae"}: "dlx.fanout"},
		Bindings: map[ExchangeRef][]Binding{
			{v, "dlx.direct"}: {{Source: "dlx.direct", Destination: "orders.dlq", RoutingKey: "orders"},
				{Source: "dlx.direct", Destination: "other.dlq", RoutingKey: "other"}},
			{v, "dlx.fanout"}: {{Source: "dlx.fanout", Destination: "all.dead"}},
			{v, "dlx.topic"}:  {{Source: "dlx.topic", Destination: "eu.dlq", RoutingKey: "*.eu"}},
			{v, "dlx.hop"}:    {{Source: "dlx.hop", Destination: "dlx.direct", ToExchange: true}},
		},
	}
	tests := []struct {
		name string
		q    Queue
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
			qs := []Queue{tt.q}
			for _, n := range []string{"orders.dlq", "other.dlq", "all.dead", "eu.dlq", "mail.dlq"} {
				qs = append(qs, Queue{Vhost: v, Name: n, Type: "classic", Messages: 4})
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
	topo := Topology{Exchanges: map[ExchangeRef]string{{"v", "dlx"}: "fanout"},
		Bindings: map[ExchangeRef][]Binding{{"v", "dlx"}: {{Source: "dlx", Destination: "a.dead"}}}}
	qs := []Queue{queue("v", "a", "classic", dlx("dlx", "")), {Vhost: "v", Name: "a.dead"}, {Vhost: "v", Name: "a.parking", Messages: 2}}
	pairDLQs(qs, &topo, []DLQOverride{{Queue: "a", DLQ: "a.parking"}})
	if qs[0].DLQ == nil || qs[0].DLQ.Name != "a.parking" || qs[0].DLQMessages != 2 || !qs[2].IsDLQ() || qs[1].IsDLQ() {
		t.Fatalf("override not applied: %+v", qs)
	}
}

func TestPairDLQsRetryLoopIsNotADLQ(t *testing.T) {
	topo := Topology{
		Exchanges: map[ExchangeRef]string{{"v", "work.retry"}: "fanout", {"v", "work.back"}: "fanout"},
		Bindings: map[ExchangeRef][]Binding{
			{"v", "work.retry"}: {{Source: "work.retry", Destination: "work.wait"}},
			{"v", "work.back"}:  {{Source: "work.back", Destination: "work"}},
		},
	}
	work := queue("v", "work", "classic", dlx("work.retry", ""))
	wait := queue("v", "work.wait", "classic", dlx("work.back", ""))
	wait.Arguments["x-message-ttl"] = float64(1000)
	qs := []Queue{work, wait}
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
	dlq := Queue{Vhost: "v", Name: "orders.dlq", DLQOf: []QueueRef{{Vhost: "v", Name: "orders"}}}
	qs := []Queue{
		dlq,
		{Vhost: "v", Name: "orders.dlq.quarantine"}, // the DLQ's default parking queue
		{Vhost: "v", Name: "jobs.quarantine"},       // no DLQ called jobs: an ordinary queue
		{Vhost: "w", Name: "orders.dlq.quarantine"}, // another vhost, where orders.dlq is no DLQ
		{Vhost: "v", Name: "held-for-review"},       // named by config
		{Vhost: "w", Name: "held-for-review"},       // config names it in vhost v only
		{Vhost: "x", Name: "parked"},                // config names it in any vhost
	}
	qs[1].Parking, qs[2].Parking = false, true // stale marks are reset
	markParking(qs, []QueueRef{{Vhost: "v", Name: "held-for-review"}, {Name: "parked"}})
	want := []bool{false, true, false, false, true, false, true}
	for i, q := range qs {
		if q.Parking != want[i] {
			t.Errorf("%s/%s: parking %v, want %v", q.Vhost, q.Name, q.Parking, want[i])
		}
	}
}

func TestSourcesOfAParkingQueueAreItsDLQs(t *testing.T) {
	orders := QueueRef{Vhost: "v", Name: "orders"}
	s := &Snapshot{Queues: []Queue{
		{Vhost: "v", Name: "orders"},
		{Vhost: "v", Name: "orders.dlq", DLQOf: []QueueRef{orders}},
		{Vhost: "v", Name: "orders.dlq.quarantine", Parking: true},
		{Vhost: "v", Name: "held", Parking: true},
	}}
	for _, tc := range []struct {
		name string
		want []QueueRef
	}{
		{"orders.dlq", []QueueRef{orders}},
		{"orders.dlq.quarantine", []QueueRef{orders}},
		{"held", nil},
		{"orders", nil},
		{"gone", nil},
	} {
		if got := s.Sources(QueueRef{Vhost: "v", Name: tc.name}); !slices.Equal(got, tc.want) {
			t.Errorf("Sources(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
