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
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// hostile is a queue name as the text format writes it: `say "hi"\`, a
// newline and a terminal escape, which the format leaves as it is.
const hostile = `say \"hi\"\\\n` + "\x1b[2J"

// A scrape as the plugin writes it, with the hostile name, and lines of
// families the first page does not read.
var scrape = strings.ReplaceAll(`# TYPE rabbitmq_detailed_queue_messages_ready gauge
# HELP rabbitmq_detailed_queue_messages_ready Messages ready to be delivered to consumers
rabbitmq_detailed_queue_messages_ready{vhost="/",queue="orders"} 3
rabbitmq_detailed_queue_messages_ready{vhost="/",queue="orders.dlq"} 120
rabbitmq_detailed_queue_messages_ready{vhost="shop",queue="HOSTILE"} 7
# TYPE rabbitmq_detailed_queue_messages_unacked gauge
rabbitmq_detailed_queue_messages_unacked{vhost="/",queue="orders"} 2
rabbitmq_detailed_queue_messages_unacked{vhost="/",queue="orders.dlq"} 0
rabbitmq_detailed_queue_messages_unacked{vhost="shop",queue="HOSTILE"} 0
# TYPE rabbitmq_detailed_queue_messages gauge
rabbitmq_detailed_queue_messages{vhost="/",queue="orders"} 5
rabbitmq_detailed_queue_messages{vhost="/",queue="orders.dlq"} 120
rabbitmq_detailed_queue_messages{vhost="shop",queue="HOSTILE"} 7
# TYPE rabbitmq_detailed_queue_process_reductions_total counter
rabbitmq_detailed_queue_process_reductions_total{vhost="/",queue="orders"} 91233
rabbitmq_detailed_queue_info{vhost="/",queue="orders",queue_type="rabbit_classic_queue",membership="leader"} 1
rabbitmq_identity_info{rabbitmq_node="rabbit@db-1",rabbitmq_cluster="rabbit@db-1",rabbitmq_endpoint="detailed"} 1
telemetry_scrape_size_bytes_sum{registry="detailed",content_type="text/plain; version=0.0.4"} 12263456
`, "HOSTILE", hostile)

func TestParseQueueDepthsReadsEveryQueueAndItsNode(t *testing.T) {
	d, err := parseQueueDepths(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	if d.node != "rabbit@db-1" {
		t.Errorf("node = %q, want rabbit@db-1", d.node)
	}
	want := []depth{
		{vhost: "/", name: "orders", messages: 5, ready: 3, unacked: 2},
		{vhost: "/", name: "orders.dlq", messages: 120, ready: 120},
		{vhost: "shop", name: "say \"hi\"\\\n\x1b[2J", messages: 7, ready: 7},
	}
	if len(d.queues) != len(want) {
		t.Fatalf("got %d queues, want %d: %+v", len(d.queues), len(want), d.queues)
	}
	for i, w := range want {
		if g := d.queues[i]; g != w {
			t.Errorf("queue %d = %+v, want %+v", i, g, w)
		}
	}

	top, total := deepestOf(d.queues, "", 2)
	if total != 3 || len(top) != 2 || top[0].Name != "orders.dlq" || top[1].Vhost != "shop" || top[1].Ready != 7 {
		t.Errorf("deepest 2 of all = %v (of %d), want orders.dlq then shop's queue (of 3)", top, total)
	}
	top, total = deepestOf(d.queues, "/", 100)
	if total != 2 || len(top) != 2 || top[0].Name != "orders.dlq" || top[1].Name != "orders" {
		t.Errorf("deepest of / = %v (of %d), want orders.dlq, orders (of 2)", top, total)
	}
}

// A scrape cut short or altered is not taken: a deep queue could be
// missing from it.
func TestParseQueueDepthsRefusesAMalformedLine(t *testing.T) {
	for name, text := range map[string]string{
		"value cut":       `rabbitmq_detailed_queue_messages{vhost="/",queue="a"} `,
		"label unclosed":  `rabbitmq_detailed_queue_messages{vhost="/",queue="a`,
		"negative":        `rabbitmq_detailed_queue_messages{vhost="/",queue="a"} -4`,
		"no queue label":  `rabbitmq_detailed_queue_messages{vhost="/"} 4`,
		"labels unclosed": `rabbitmq_detailed_queue_messages{vhost="/",queue="a"`,
	} {
		if _, err := parseQueueDepths(strings.NewReader(text + "\n")); err == nil {
			t.Errorf("%s: %q parsed without error", name, text)
		}
	}
}

func TestMetricsURLIsTheDefaultPortOnlyBesideTheDefaultManagementPort(t *testing.T) {
	for _, c := range []struct{ configured, mgmt, want string }{
		{"", "http://rabbit.example:15672", "http://rabbit.example:15692"},
		{"", "https://rabbit.example:15671", "https://rabbit.example:15691"},
		{"", "http://[::1]:15672", "http://[::1]:15692"},
		// Another port: the default metrics port may be another broker's.
		{"", "http://127.0.0.1:15673", ""},
		{"", "http://rabbit.example", ""},
		{"http://metrics.example:9419/", "http://127.0.0.1:15673", "http://metrics.example:9419"},
		{MetricsOff, "http://rabbit.example:15672", ""},
	} {
		u, err := url.Parse(c.mgmt)
		if err != nil {
			t.Fatal(err)
		}
		if got := metricsURL(c.configured, u); got != c.want {
			t.Errorf("metricsURL(%q, %s) = %q, want %q", c.configured, c.mgmt, got, c.want)
		}
	}
}

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

// BenchmarkParseQueueDepths10k reads a scrape of 10 000 queues as the
// plugin writes it (about 6 MB with the families it adds).
func BenchmarkParseQueueDepths10k(b *testing.B) {
	var sb strings.Builder
	family := func(metric string, value func(i int) int) {
		fmt.Fprintf(&sb, "# TYPE %s gauge\n", metric)
		for i := range 10000 {
			fmt.Fprintf(&sb, "%s{vhost=\"warren-bench\",queue=\"svc-%05d.events\"} %d\n", metric, i, value(i))
		}
	}
	family("rabbitmq_detailed_queue_messages_ready", func(i int) int { return i % 97 })
	family("rabbitmq_detailed_queue_messages_unacked", func(i int) int { return i % 3 })
	family("rabbitmq_detailed_queue_messages", func(i int) int { return i%97 + i%3 })
	family("rabbitmq_detailed_queue_process_reductions_total", func(i int) int { return i * 1000 })
	family("rabbitmq_detailed_queue_info", func(int) int { return 1 })
	sb.WriteString(`rabbitmq_identity_info{rabbitmq_node="rabbit@bench",rabbitmq_cluster="bench"} 1` + "\n")
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := parseQueueDepths(strings.NewReader(text))
		if err != nil || len(d.queues) != 10000 {
			b.Fatalf("%v, %d queues", err, len(d.queues))
		}
	}
}

// The broker's credentials go to the metrics endpoint only on the
// management API's own host, and not in clear text when the management
// API is reached over TLS.
func TestMetricsCredentialsStayOnTheManagementHost(t *testing.T) {
	for _, c := range []struct {
		mgmt, metrics string
		auth          bool
	}{
		{"http://rabbit.example:15672", "", true}, // derived: the management host, port 15692
		{"http://rabbit.example:15672", "http://rabbit.example:9419", true},
		{"http://rabbit.example:15672", "http://scraper.example:15692", false},
		{"http://rabbit.example:15672", MetricsOff, false},
		{"https://rabbit.example:15671", "", true}, // derived: https, port 15691
		{"https://rabbit.example:15671", "http://rabbit.example:15692", false},
		{"https://rabbit.example:15671", "https://rabbit.example:15691", true},
	} {
		cl, err := New(Options{URL: c.mgmt, MetricsURL: c.metrics, Username: "oncall", Password: "s3cret"})
		if err != nil {
			t.Fatal(err)
		}
		if cl.metricsAuth != c.auth {
			t.Errorf("management %s, metrics_url %q: credentials sent = %v, want %v", c.mgmt, c.metrics, cl.metricsAuth, c.auth)
		}
	}
}

// A management API that redirects is not followed: Go's client would
// send the credentials on to the new address when its host matches, even
// over plain HTTP or to another port. The error says where it redirects.
func TestARedirectIsNotFollowedWithTheCredentials(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		w.Write([]byte(`{}`))
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirecting.Close()
	cl, err := New(Options{URL: redirecting.URL, MetricsURL: MetricsOff, Username: "oncall", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Overview(context.Background())
	if err == nil || !strings.Contains(err.Error(), "redirects to "+other.URL) {
		t.Fatalf("Overview through a redirect = %v, want an error naming where it redirects", err)
	}
	if leaked.Load() {
		t.Fatal("the credentials were sent on to the redirect's target")
	}
}

// A node whose disk monitor never started reports disk_free as "NaN":
// that node's figure is unknown, and the cluster is still read.
func TestANodesOddFigureDoesNotFailTheRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"name":"rabbit@a","running":true,"mem_used":104857600,"mem_limit":838860800,"mem_alarm":false,` +
			`"disk_free":"NaN","disk_free_limit":50000000,"disk_free_alarm":false,"partitions":[]},` +
			`{"name":"rabbit@b","running":false}]`))
	}))
	defer srv.Close()
	cl, err := New(Options{URL: srv.URL, MetricsURL: MetricsOff, Username: "oncall", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cl.Nodes(context.Background())
	if err != nil {
		t.Fatalf("Nodes with a NaN disk_free = %v, want the cluster read", err)
	}
	if len(nodes) != 2 || nodes[0].DiskFree != 0 || nodes[0].MemUsed != 104857600 || nodes[0].DiskLimit != 50000000 || nodes[1].Running {
		t.Fatalf("nodes = %+v", nodes)
	}
}
