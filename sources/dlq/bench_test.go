package dlq

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
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
// reused death slice; compare BenchmarkDecode, which builds a full record.
func BenchmarkScanAdd(b *testing.B) {
	d := benchDelivery()
	st := &Stats{Attempts: map[int]int{}, Reasons: map[string]int{}, Origins: map[string]int{}}
	sc := &scanner{st: st}
	b.ReportAllocs()
	for b.Loop() {
		_ = sc.add(nil, d, false)
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
