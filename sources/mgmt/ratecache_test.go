//go:build integration

package mgmt

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

// countingProxy forwards to the broker's management API and counts the
// requests for one queue's own resource.
type countingProxy struct {
	mu    sync.Mutex
	count map[string]int
}

func (p *countingProxy) rowRequests(vhost, name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count["/api/queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name)]
}

func proxiedClient(t *testing.T) (*Client, *countingProxy) {
	t.Helper()
	target, err := url.Parse(testMgmt)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{count: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.count[r.URL.EscapedPath()]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

func TestVisibleRowStatisticsAreReadOncePerStatisticsInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	e.publish("work", 4, nil)
	c, p := proxiedClient(t)
	ref := domain.QueueRef{Vhost: e.vhost, Name: "work"}
	opts := domain.SnapshotOptions{Vhost: e.vhost, RatesFor: []domain.QueueRef{ref}}
	// A queue seconds old is listed without its statistics, which are
	// unknown and asked for again at each snapshot until they come.
	e.snapshot(opts, func(s *domain.Snapshot) bool {
		q := s.Queue(ref)
		if q != nil && q.StatsPending && q.HasRates {
			t.Fatalf("a row without its statistics reads as known: %+v", q)
		}
		return q != nil && q.HasRates
	})

	first, err := c.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.rowRequests(e.vhost, "work"); n != 1 {
		t.Fatalf("two snapshots within %v asked for the row's statistics %d times, want once", domain.DefaultStatsInterval, n)
	}
	q1, q2 := first.Queue(ref), second.Queue(ref)
	if !q2.HasRates || q2.PublishRate != q1.PublishRate || q2.Consumers != q1.Consumers || q2.OldestUnknownReason != q1.OldestUnknownReason {
		t.Fatalf("reused figures differ: first %+v, second %+v", q1, q2)
	}
	// The reused figures are as old as the request that read them.
	if min := domain.DefaultStatsInterval + second.TakenAt.Sub(first.TakenAt); second.StatsAge < min {
		t.Fatalf("stats age %v of reused figures, want at least %v", second.StatsAge, min)
	}

	// A row not read before is asked for at once.
	e.queue("other", nil)
	other := domain.QueueRef{Vhost: e.vhost, Name: "other"}
	opts.RatesFor = append(opts.RatesFor, other)
	third, err := c.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if q := third.Queue(other); p.rowRequests(e.vhost, "other") != 1 || p.rowRequests(e.vhost, "work") != 1 || q.HasRates == q.StatsPending {
		t.Fatalf("requests: work %d, other %d; other has rates %v, statistics pending %v", p.rowRequests(e.vhost, "work"), p.rowRequests(e.vhost, "other"), q.HasRates, q.StatsPending)
	}

	// After one interval the figures are read again.
	waitFor(t, domain.DefaultStatsInterval+5*time.Second, func() (bool, string) {
		if _, err := c.Snapshot(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		n := p.rowRequests(e.vhost, "work")
		return n >= 2, fmt.Sprintf("the row's statistics were read %d times", n)
	})
}

func TestTheOverviewIsReadOncePerStatisticsInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, p := proxiedClient(t)
	opts := domain.SnapshotOptions{Vhost: e.vhost}
	first, err := c.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	n := p.count["/api/overview"]
	p.mu.Unlock()
	if n != 1 {
		t.Fatalf("two snapshots within %v read /api/overview %d times, want once", domain.DefaultStatsInterval, n)
	}
	if second.Overview.RabbitMQVersion != first.Overview.RabbitMQVersion || second.Overview.RabbitMQVersion == "" {
		t.Fatalf("reused overview lost the version: %q vs %q", second.Overview.RabbitMQVersion, first.Overview.RabbitMQVersion)
	}
	if min := domain.DefaultStatsInterval + second.TakenAt.Sub(first.TakenAt); second.StatsAge < min {
		t.Fatalf("stats age %v with a reused overview, want at least %v", second.StatsAge, min)
	}
	// Overview itself, used by config check and the CLI, always asks.
	if _, err := c.Overview(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	n = p.count["/api/overview"]
	p.mu.Unlock()
	if n != 2 {
		t.Fatalf("Overview read /api/overview %d times in all, want 2", n)
	}
}
