package mgmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/warrenops/warren/domain"
)

// cheapListJSON is what /api/queues/VHOST?disable_stats=true&
// enable_queue_totals=true answers for n queues, half of them
// dead-lettering into the other half through one exchange, in the shape
// RabbitMQ 3.10 gives it.
func cheapListJSON(b *testing.B, n int) ([]byte, *scopeEntry, []domain.Binding) {
	b.Helper()
	qs := make([]map[string]any, 0, n)
	var binds []domain.Binding
	for i := 0; i < n/2; i++ {
		name := fmt.Sprintf("svc-%05d.events", i)
		base := func(q string, args map[string]any) map[string]any {
			return map[string]any{
				"arguments": args, "auto_delete": false, "durable": true, "exclusive": false,
				"messages": i % 17, "messages_ready": i % 17, "messages_unacknowledged": 0,
				"name": q, "node": "rabbit@localhost", "policy": nil, "state": "running",
				"type": "classic", "vhost": "v",
			}
		}
		qs = append(qs,
			base(name, map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": name}),
			base(name+".dlq", map[string]any{}))
		binds = append(binds, domain.Binding{Source: "dlx", Destination: name + ".dlq", RoutingKey: name, Arguments: map[string]any{}})
	}
	raw, err := json.Marshal(qs)
	if err != nil {
		b.Fatal(err)
	}
	sc := &scopeEntry{
		exchanges:  map[domain.ExchangeRef]string{{Vhost: "v", Name: "dlx"}: "direct", {Vhost: "v", Name: ""}: "direct"},
		alternates: map[domain.ExchangeRef]string{},
		policies:   map[string]map[string]map[string]any{},
	}
	return raw, sc, binds
}

// BenchmarkRefreshClientSide10k is what warren's own process spends on a
// refresh of 10 000 queues once the broker has answered: decoding the
// cheap list, applying policies, pairing every queue with its DLQ through
// the dead-letter exchange's bindings, and sorting. The broker's side is
// measured by the harness (testdata/bench).
func BenchmarkRefreshClientSide10k(b *testing.B) {
	raw, sc, binds := cheapListJSON(b, 10000)
	topo := domain.Topology{Exchanges: sc.exchanges, Alternates: sc.alternates,
		Bindings: map[domain.ExchangeRef][]domain.Binding{{Vhost: "v", Name: "dlx"}: binds}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		queues, err := decodeQueues(bytes.NewReader(raw), false)
		if err != nil {
			b.Fatal(err)
		}
		applyPolicies(queues, sc)
		domain.SortQueues(queues)
		pairDLQs(queues, &topo, nil)
		if queues[0].DLQ == nil {
			b.Fatal("no DLQ paired")
		}
	}
}
