package dlq

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

func benchDelivery() amqp.Delivery {
	return amqp.Delivery{
		MessageId: "m-1", Body: make([]byte, 1024),
		Headers: amqp.Table{
			"x-death": []any{
				deathEntry("orders", "rejected", 3, t0, "order.created"),
				deathEntry("orders.retry", "expired", 2, t0.Add(time.Minute), "order.created"),
			},
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected", "x-first-death-exchange": "shop",
			"event_id": "E-1",
		},
	}
}

// BenchmarkScanAdd is the statistics scan's cost per message, with the
// reused death slice, the conventions tried and the failure group
// counted; compare BenchmarkDecode, which builds a full record.
func BenchmarkScanAdd(b *testing.B) {
	for _, c := range []struct {
		name string
		d    amqp.Delivery
	}{
		{"broker", benchDelivery()},
		{"masstransit", massTransitFault("m-1", "Order 1001 not found")},
		{"spring", springRepublished("s-1", "Card 4242 declined")},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := &domain.Stats{Attempts: map[int]int{}, Reasons: map[string]int{}, Origins: map[string]int{},
				Groups: domain.NewGroups(false), Conventions: map[string]int{}}
			sc := &scanner{st: st, o: Options{}.withDefaults()}
			b.ReportAllocs()
			for b.Loop() {
				_ = sc.add(nil, c.d, false)
			}
		})
	}
}

// BenchmarkNormalize is a failure group's message normalised.
func BenchmarkNormalize(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = domain.Normalize("Order 1001 for customer 3f2a9c1e-0b7d-4c55-9a1e-2b3c4d5e6f70 not found in 'eu-west'")
	}
}

func BenchmarkDecode(b *testing.B) {
	d := benchDelivery()
	o := Options{LogicalID: "header:event_id"}
	b.ReportAllocs()
	for b.Loop() {
		_ = Decode(d, o, false)
	}
}
