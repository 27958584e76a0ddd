//go:build integration

package mgmt

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// On the real broker, with its Prometheus plugin on: when the management
// API's page is slow (here held back by a proxy, as a broker of 10 000
// queues is), the first page comes from the metrics, once they name
// every queue the broker counts, with the depths the queues hold; a
// wrong or silent endpoint leaves the page to the management API.
func TestFirstPageFromTheBrokersMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queuesHolding(map[string]int{"shallow": 1, "deep": 5, "middle": 3})
	target, err := url.Parse(testMgmt)
	if err != nil {
		t.Fatal(err)
	}
	const held = 3 * time.Second
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/queues") {
			select {
			case <-time.After(held):
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	c, err := New(Options{URL: slow.URL, MetricsURL: testkit.MetricsURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.metricsDepths(context.Background()); err != nil || d == nil {
		t.Fatalf("the metrics at %s did not answer (make services enables rabbitmq_prometheus): %v", testkit.MetricsURL, err)
	}
	// The metrics follow the queues' statistics (up to an interval old),
	// and other tests add or drop queues on the shared broker at any
	// moment: the test waits for a page that shows the depths.
	var s *domain.Snapshot
	waitFor(t, 30*time.Second, func() (bool, string) {
		start := time.Now()
		if s, err = c.FirstPage(context.Background(), e.vhost, 2); err != nil {
			t.Fatal(err)
		}
		if !s.FromMetrics && time.Since(start) < held {
			t.Fatalf("the management API's page came in %v, before the proxy let it through", time.Since(start))
		}
		return s.FromMetrics && len(s.Queues) == 2 && s.Queues[0].Messages == 5 && s.Queues[1].Messages == 3 &&
			s.Overview.Totals.Messages >= 9, fmt.Sprintf("%s totals %+v", describe(s), s.Overview.Totals)
	})
	if !s.Partial || s.QueueTotal != 3 || s.Queues[0].Name != "deep" || s.Queues[1].Name != "middle" ||
		s.Queues[0].Ready != 5 || s.Queues[0].Vhost != e.vhost || len(s.Nodes) == 0 {
		t.Fatalf("partial %v of %d: %s, totals %+v", s.Partial, s.QueueTotal, describe(s), s.Overview.Totals)
	}

	// Another service on the port, or nothing listening: the management
	// API's page, with the queues' types.
	for _, other := range []string{testMgmt, "http://127.0.0.1:1"} {
		c, err := New(Options{URL: testMgmt, MetricsURL: other, Username: "guest", Password: "guest"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.FirstPage(context.Background(), e.vhost, 2)
		if err != nil {
			t.Fatalf("metrics at %s: %v", other, err)
		}
		if s.FromMetrics || len(s.Queues) != 2 || s.Queues[0].Name != "deep" || s.Queues[0].Type == "" {
			t.Fatalf("metrics at %s: from metrics %v, %s", other, s.FromMetrics, describe(s))
		}
	}
}
