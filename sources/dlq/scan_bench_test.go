//go:build integration

package dlq

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/warrenops/warren/testkit"
)

// benchDeadLetters is the DLQ size of the broker benchmarks:
// WARREN_BENCH_DEAD_LETTERS, 10 000 by default (the harness in
// testdata/bench runs 10 000 and 100 000).
func benchDeadLetters() int {
	if n, err := strconv.Atoi(os.Getenv("WARREN_BENCH_DEAD_LETTERS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// BenchmarkScanBroker scans a DLQ of 512-byte dead letters made by the
// broker (max-length overflow), beside a plain consumer reading the same
// queue the same way (manual ack, unlimited prefetch, everything given
// back by closing the channel): the scan's msg/s against the raw rate.
func BenchmarkScanBroker(b *testing.B) {
	n := benchDeadLetters()
	vhost, conn := testVhost(b)
	fillByMaxLength(b, conn, n, 512)
	ctx := context.Background()
	b.Run("scan", func(b *testing.B) {
		var spent time.Duration
		for b.Loop() {
			st, err := Scan(ctx, conn, classicDLQ(vhost), Options{}, nil)
			if err != nil || st.Total != n {
				b.Fatalf("scanned %v, %v", st, err)
			}
			spent += st.Took
			b.StopTimer()
			waitReady(b, conn, sceneDLQ, n)
			b.StartTimer()
		}
		b.ReportMetric(float64(n*b.N)/spent.Seconds(), "msg/s")
	})
	b.Run("plain-consumer", func(b *testing.B) {
		var spent time.Duration
		for b.Loop() {
			start := time.Now()
			ch := testkit.Channel(b, conn)
			if err := ch.Qos(0, 0, false); err != nil {
				b.Fatal(err)
			}
			deliveries, err := ch.Consume(sceneDLQ, "", false, false, false, false, nil)
			if err != nil {
				b.Fatal(err)
			}
			for range n {
				<-deliveries
			}
			spent += time.Since(start)
			ch.Close()
			b.StopTimer()
			waitReady(b, conn, sceneDLQ, n)
			b.StartTimer()
		}
		b.ReportMetric(float64(n*b.N)/spent.Seconds(), "msg/s")
	})
}

// BenchmarkBrowsePage is one browse page of DefaultWindow dead letters
// held and returned: what opening a DLQ costs before its first screen.
func BenchmarkBrowsePage(b *testing.B) {
	vhost, conn := testVhost(b)
	fillByMaxLength(b, conn, DefaultWindow, 512)
	ctx := context.Background()
	for b.Loop() {
		s, err := Open(ctx, conn, classicDLQ(vhost), Options{})
		if err != nil {
			b.Fatal(err)
		}
		page, err := s.Next(ctx)
		if err != nil || len(page.Letters) != DefaultWindow {
			b.Fatalf("page of %d, %v", len(page.Letters), err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		waitReady(b, conn, sceneDLQ, DefaultWindow)
		b.StartTimer()
	}
	b.ReportMetric(float64(DefaultWindow*b.N)/b.Elapsed().Seconds(), "msg/s")
}
