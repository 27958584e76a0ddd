//go:build integration

package mgmt

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// BenchmarkSnapshot measures one dashboard refresh (cheap list, cached
// topology, rates for 40 visible rows) and one status-command read (all
// rates) on a vhost of WARREN_BENCH_QUEUES queues (200 by default, so a
// plain `go test -bench` stays quick; the anchor is 10 000).
func BenchmarkSnapshot(b *testing.B) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("WARREN_BENCH_QUEUES")); err == nil && v > 0 {
		n = v
	}
	e := newEnv(b)
	e.exchange("dlx", "direct")
	ch := e.channel()
	var visible []domain.QueueRef
	for i := 0; i < n; i += 2 {
		name := fmt.Sprintf("q%05d", i)
		dlq := name + ".dlq"
		if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
		if err := ch.QueueBind(dlq, name, "dlx", false, nil); err != nil {
			b.Fatal(err)
		}
		args := amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": name}
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			b.Fatal(err)
		}
		if len(visible) < 40 {
			visible = append(visible, domain.QueueRef{Vhost: e.vhost, Name: name})
		}
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		o    domain.SnapshotOptions
	}{
		{"refresh", domain.SnapshotOptions{Vhost: e.vhost, RatesFor: visible}},
		{"all-rates", domain.SnapshotOptions{Vhost: e.vhost, AllRates: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				s, err := e.c.Snapshot(ctx, bc.o)
				if err != nil {
					b.Fatal(err)
				}
				if len(s.Queues) != n {
					b.Fatalf("%d queues, want %d", len(s.Queues), n)
				}
			}
			b.ReportMetric(float64(n), "queues")
		})
	}
}
