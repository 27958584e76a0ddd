//go:build integration

package mgmt

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// publishEvery publishes to queue at one message per interval until the
// test ends.
func publishEvery(t *testing.T, e *env, queue string, interval time.Duration) {
	t.Helper()
	ch := e.channel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if ch.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{Body: []byte("m")}) != nil {
					return
				}
			}
		}
	}()
}

// ackEvery consumes queue and acks one message per interval.
func ackEvery(t *testing.T, e *env, queue string, interval time.Duration) {
	t.Helper()
	ch := e.channel()
	if err := ch.Qos(100, 0, false); err != nil {
		t.Fatal(err)
	}
	msgs, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok || m.Ack(false) != nil {
					return
				}
			}
		}
	}()
}

func TestSnapshotDrainETA(t *testing.T) {
	t.Parallel()
	t.Run("a queue nobody consumes is growing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.queue("grow", nil)
		publishEvery(t, e, "grow", 20*time.Millisecond)
		ref := domain.QueueRef{Vhost: e.vhost, Name: "grow"}
		s := e.snapshot(domain.SnapshotOptions{AllRates: true}, func(s *domain.Snapshot) bool {
			q := s.Queue(ref)
			return q != nil && q.PublishRate > 20
		})
		q := s.Queue(ref)
		if _, draining := q.DrainETA(); draining {
			t.Fatalf("λ=%.1f μ=%.1f reported as draining", q.PublishRate, q.AckRate)
		}
		if d := q.Drain(); d.Movement != domain.Growing || d.Growth <= 0 {
			t.Fatalf("drain %+v, want growing", d)
		}
	})
	t.Run("a queue consumed faster than fed drains in backlog ÷ (μ − λ)", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.queue("drain", nil)
		e.publish("drain", 4000, nil)
		publishEvery(t, e, "drain", 20*time.Millisecond) // λ ≈ 50/s
		ackEvery(t, e, "drain", 4*time.Millisecond)      // μ ≈ 250/s at most
		ref := domain.QueueRef{Vhost: e.vhost, Name: "drain"}
		s := e.snapshot(domain.SnapshotOptions{RatesFor: []domain.QueueRef{ref}}, func(s *domain.Snapshot) bool {
			q := s.Queue(ref)
			return q != nil && q.PublishRate > 20 && q.AckRate > q.PublishRate+20
		})
		q := s.Queue(ref)
		eta, draining := q.DrainETA()
		want := time.Duration(float64(q.Messages) / (q.AckRate - q.PublishRate) * float64(time.Second))
		if !draining || eta != want || eta <= 0 {
			t.Fatalf("λ=%.1f μ=%.1f backlog %d: ETA %v draining %v, want %v", q.PublishRate, q.AckRate, q.Messages, eta, draining, want)
		}
		if d := q.Drain(); d.Movement != domain.Draining || d.ETA <= 0 {
			t.Fatalf("drain %+v, want draining", d)
		}
	})
}
