//go:build integration

package actions

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/testkit"
)

// benchLetters is the DLQ size of the phase benchmarks:
// WARREN_BENCH_DEAD_LETTERS, 5 000 by default so `go test -bench` stays
// quick (the harness in testdata/bench runs 10 000 and 50 000).
func benchLetters() int {
	if n, err := strconv.Atoi(os.Getenv("WARREN_BENCH_DEAD_LETTERS")); err == nil && n > 0 {
		return n
	}
	return 5000
}

// body512 is a dead letter of the size: 512 bytes of JSON.
func body512(i int) amqp.Publishing {
	body := make([]byte, 512)
	copy(body, fmt.Sprintf(`{"event_id":"evt-%07d","pad":"`, i))
	for j := 40; j < 510; j++ {
		body[j] = 'x'
	}
	copy(body[510:], `"}`)
	return amqp.Publishing{MessageId: msgID(i), DeliveryMode: amqp.Persistent, ContentType: "application/json",
		Timestamp: time.Now(), Body: body}
}

// BenchmarkReplayPhases splits a replay as `warren dlq replay` runs it
// into its phases, each in msg/s: holding the DLQ in a browse session
// (window 4096, as the command uses), planning, and executing (audit
// records, pipelined publish with confirms, one ack per delivery), with
// the publishing on a connection of its own as the command does.
func BenchmarkReplayPhases(b *testing.B) {
	n := benchLetters()
	var hold, plan, exec time.Duration
	for range b.N {
		b.StopTimer()
		s := newScene(b, n, body512)
		pubConn := testkit.Dial(b, s.vhost)
		b.StartTimer()
		start := time.Now()
		sess, letters := s.browse(b, s.conn, s.dlq)
		hold += time.Since(start)
		start = time.Now()
		p := s.plan(b, Request{Letters: letters, Now: time.Now()})
		plan += time.Since(start)
		env := s.env(sess)
		env.Conn = pubConn
		start = time.Now()
		res, err := Execute(testCtx(b), p, env, nil)
		exec += time.Since(start)
		if err != nil || res.Confirmed != n {
			b.Fatalf("result %+v, %v", res, err)
		}
	}
	total := float64(n * b.N)
	b.ReportMetric(total/hold.Seconds(), "hold-msg/s")
	b.ReportMetric(total/plan.Seconds(), "plan-msg/s")
	b.ReportMetric(total/exec.Seconds(), "execute-msg/s")
	b.ReportMetric(total/(hold+plan+exec).Seconds(), "msg/s")
}

// BenchmarkPublisherPipeline is the Publisher alone sending n copies of a
// 512-byte message with mandatory=true, beside the same pipeline written
// plainly with the client library (the ceiling of the harness): what the
// matching of confirms and returns costs.
func BenchmarkPublisherPipeline(b *testing.B) {
	n := benchLetters()
	vhost := testkit.Vhost(b, "warren-actions")
	conn := testkit.Dial(b, vhost)
	testkit.Declare(b, testkit.Channel(b, conn), "sink", nil)
	msg := body512(0)
	b.Run("publisher", func(b *testing.B) {
		var spent time.Duration
		for range b.N {
			pub, err := NewPublisher(conn, DefaultWindow)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan int)
			go func() {
				ok := 0
				for s := range pub.Results() {
					if s.Outcome == Confirmed {
						ok++
					}
				}
				done <- ok
			}()
			start := time.Now()
			for i := range n {
				if err := pub.Publish(testCtx(b), Outgoing{Ref: i, RoutingKey: "sink", Msg: msg}); err != nil {
					b.Fatal(err)
				}
			}
			if err := pub.Drain(testCtx(b)); err != nil {
				b.Fatal(err)
			}
			spent += time.Since(start)
			pub.Close()
			if ok := <-done; ok != n {
				b.Fatalf("%d of %d confirmed", ok, n)
			}
		}
		b.ReportMetric(float64(n*b.N)/spent.Seconds(), "msg/s")
	})
	b.Run("plain", func(b *testing.B) {
		var spent time.Duration
		for range b.N {
			ch := testkit.Channel(b, conn)
			if err := ch.Confirm(false); err != nil {
				b.Fatal(err)
			}
			confirms := ch.NotifyPublish(make(chan amqp.Confirmation, DefaultWindow))
			slots := make(chan struct{}, DefaultWindow)
			done := make(chan int)
			go func() {
				ok := 0
				for range n {
					if c := <-confirms; c.Ack {
						ok++
					}
					<-slots
				}
				done <- ok
			}()
			start := time.Now()
			for range n {
				slots <- struct{}{}
				if err := ch.Publish("", "sink", true, false, msg); err != nil {
					b.Fatal(err)
				}
			}
			ok := <-done
			spent += time.Since(start)
			if ok != n {
				b.Fatalf("%d of %d confirmed", ok, n)
			}
			ch.Close()
		}
		b.ReportMetric(float64(n*b.N)/spent.Seconds(), "msg/s")
	})
}
