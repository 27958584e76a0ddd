//go:build integration

package actions

import (
	"testing"
	"time"
)

// BenchmarkReplay measures a whole replay of a held DLQ: intent, the
// pipelined publish with confirms, one ack per confirmed delivery, and the
// outcome records. msg/s is the figure to compare across changes.
func BenchmarkReplay(b *testing.B) {
	const n = 5000
	var spent time.Duration
	for range b.N {
		b.StopTimer()
		s := newScene(b, n, plain)
		sess, letters := s.browse(b, s.conn, s.dlq)
		plan := s.plan(b, Request{Letters: letters})
		b.StartTimer()
		start := time.Now()
		res, err := Execute(testCtx(b), plan, s.env(sess), nil)
		spent += time.Since(start)
		if err != nil || res.Confirmed != n {
			b.Fatalf("result %+v, %v", res, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/spent.Seconds(), "msg/s")
}
