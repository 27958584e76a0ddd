//go:build integration

package mgmt

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/nodes"
)

// A cluster's node the config names first is down: the management API of
// a fallback node answers, and the overview says it came from there and
// why the first did not.
func TestAFallbackNodeAnswersWhenTheFirstIsDown(t *testing.T) {
	t.Parallel()
	closed := "http://" + closedPort(t)
	c, err := New(Options{URL: closed, Fallbacks: []string{testMgmt}, MetricsURL: MetricsOff, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ov, err := c.Overview(ctx)
	if err != nil {
		t.Fatalf("Overview with the first node down and a fallback up: %v", err)
	}
	if ov.Via != strings.TrimRight(testMgmt, "/") || ov.First != closed {
		t.Fatalf("Overview.Via = %q, First = %q; want the fallback %s and the first %s", ov.Via, ov.First, testMgmt, closed)
	}
	if !strings.Contains(ov.Missed, closed) || !strings.Contains(ov.Missed, "unreachable") || ov.MissedAt.IsZero() {
		t.Fatalf("Overview.Missed = %q at %v; want why %s did not answer", ov.Missed, ov.MissedAt, closed)
	}
	s, err := c.Snapshot(ctx, domain.SnapshotOptions{})
	if err != nil || len(s.Nodes) == 0 {
		t.Fatalf("Snapshot through the fallback: %v (%d nodes)", err, len(s.Nodes))
	}
	if sv := c.Serving(); sv.URL != strings.TrimRight(testMgmt, "/") || !sv.Fallback {
		t.Fatalf("Serving = %+v; want the fallback", sv)
	}
}

// A node answering 503 (starting, stopping, or a proxy before a node
// down) counts as down; bad credentials are the cluster's answer, not
// sent to the other nodes.
func TestOnlyANodeNotAnsweringSendsARequestElsewhere(t *testing.T) {
	t.Parallel()
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"service unavailable","reason":"node is booting"}`, http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()
	target, _ := url.Parse(testMgmt)
	var proxied atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	defer counting.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := New(Options{URL: unavailable.URL, Fallbacks: []string{counting.URL}, MetricsURL: MetricsOff, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	if ov, err := c.Overview(ctx); err != nil || ov.Via != counting.URL || !strings.Contains(ov.Missed, "503") {
		t.Fatalf("first node answering 503: overview %+v, %v; want the fallback's, naming the 503", ov, err)
	}

	bad, err := New(Options{URL: testMgmt, Fallbacks: []string{counting.URL}, MetricsURL: MetricsOff, Username: "guest", Password: "not-the-Password-42"})
	if err != nil {
		t.Fatal(err)
	}
	before := proxied.Load()
	_, err = bad.Overview(ctx)
	if !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("bad credentials: %v; want ErrUnauthorized", err)
	}
	if proxied.Load() != before {
		t.Fatalf("bad credentials were tried on the fallback too (%d requests); the cluster's answer is the same on every node", proxied.Load()-before)
	}
}

// No node answering: the error names each, and still reads as the
// broker unreachable, so the dashboard says "disconnected, retrying".
func TestNoNodeAnsweringIsUnreachableNamingEachNode(t *testing.T) {
	t.Parallel()
	a, b := "http://"+closedPort(t), "http://"+closedPort(t)
	c, err := New(Options{URL: a, Fallbacks: []string{b}, MetricsURL: MetricsOff, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Overview(context.Background())
	var all *nodes.AllDown
	if !errors.As(err, &all) || !domain.IsDisconnected(err) {
		t.Fatalf("no node answering: %v; want AllDown, unreachable", err)
	}
	if msg := err.Error(); !strings.Contains(msg, a) || !strings.Contains(msg, b) {
		t.Fatalf("error %q does not name both nodes", msg)
	}
}
