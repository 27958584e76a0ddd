package mgmt

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestNewRejectsABadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:15672", "amqp://127.0.0.1:5672", "http://user:pw@"} {
		if _, err := New(Options{URL: u}); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("New(%q) = %v", u, err)
		}
	}
}

func TestReusedStatisticsTakeTheFresherDepth(t *testing.T) {
	ts := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name       string
		ready      int64
		stats      rowStats
		wantReason string
	}{
		{"a queue empty at the last collection now holds messages", 3,
			rowStats{OldestUnknownReason: "no ready message"}, "statistics not collected yet"},
		{"a known head timestamp is kept", 3, rowStats{HeadMessageTimestamp: &ts}, ""},
		{"an empty queue stays without a head message", 0,
			rowStats{OldestUnknownReason: "no ready message"}, "no ready message"},
		{"a queue emptied since the last collection loses its head timestamp", 0,
			rowStats{HeadMessageTimestamp: &ts}, "no ready message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := withStats(domain.Queue{Name: "q", Type: "classic", Messages: c.ready, Ready: c.ready}, c.stats)
			if !q.HasRates || q.Ready != c.ready || q.OldestUnknownReason != c.wantReason ||
				(c.wantReason == "") != (q.HeadMessageTimestamp != nil) {
				t.Fatalf("got %+v", q)
			}
			if strings.Contains(q.OldestUnknownReason, "not fetched") {
				t.Fatalf("reason %q", q.OldestUnknownReason)
			}
		})
	}
}

// The statistics listing joined with the fresher depths of the cheap
// one (status, the queue screen) follows the same rule: a queue emptied
// since the statistics were collected has no oldest message.
func TestAStatisticsRowJoinedWithAFresherEmptyDepthLosesItsHead(t *testing.T) {
	ts := time.Unix(1_700_000_000, 0)
	stats := domain.Queue{Name: "q", Type: "classic", Messages: 5, Ready: 5, HasRates: true, HeadMessageTimestamp: &ts}
	q := withDepth(stats, domain.Queue{Name: "q", Type: "classic"})
	if q.HeadMessageTimestamp != nil || q.OldestUnknownReason != "no ready message" {
		t.Fatalf("an emptied queue keeps a head from before: %+v", q)
	}
	if q := withDepth(stats, domain.Queue{Name: "q", Type: "classic", Messages: 2, Ready: 2}); q.HeadMessageTimestamp == nil {
		t.Fatal("a queue still holding messages lost its head timestamp")
	}
}

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

func TestHeldTotalsAddTheVhostsThatHaveStatistics(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	got := heldTotals([]vhostHeld{
		{Name: "a", Messages: n(10), Ready: n(7), Unacked: n(3)},
		{Name: "new"}, // no statistics yet
		{Name: "b", Messages: n(5), Ready: n(5), Unacked: n(0)},
	})
	if got != (domain.Totals{Messages: 15, Ready: 12, Unacked: 3}) {
		t.Fatalf("totals %+v", got)
	}
}

func TestDeepestAcrossReadsOnlyTheVhostsThatCanHoldADeeperQueue(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	pages := map[string][]domain.Queue{
		"busy":   {{Vhost: "busy", Name: "b1", Messages: 40}, {Vhost: "busy", Name: "b2", Messages: 9}, {Vhost: "busy", Name: "b3", Messages: 1}},
		"some":   {{Vhost: "some", Name: "s1", Messages: 12}, {Vhost: "some", Name: "s2", Messages: 3}},
		"fresh":  {{Vhost: "fresh", Name: "f1", Messages: 2}},
		"little": {{Vhost: "little", Name: "l1", Messages: 8}},
		"empty":  {{Vhost: "empty", Name: "e1"}},
	}
	vs := []vhostHeld{{Name: "empty", Messages: n(0)}, {Name: "little", Messages: n(8)}, {Name: "busy", Messages: n(50)},
		{Name: "fresh"}, {Name: "some", Messages: n(15)}}
	var read []string
	page := func(_ context.Context, vhost string, size int) ([]domain.Queue, int, error) {
		read = append(read, vhost)
		p := pages[vhost]
		return p[:min(size, len(p))], len(p), nil
	}
	got, total, err := deepestAcross(context.Background(), vs, 3, page)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range got {
		names = append(names, q.Name)
	}
	// fresh has no count yet and is read first; after busy and some the
	// shallowest kept is 9 deep, so little (8) and empty cannot hold a
	// deeper queue and are not read.
	if strings.Join(read, ",") != "fresh,busy,some" || strings.Join(names, ",") != "b1,s1,b2" || total != 6 {
		t.Fatalf("read %v, kept %v of %d", read, names, total)
	}

	// With room for every queue, every vhost is read.
	read = nil
	got, total, err = deepestAcross(context.Background(), vs, 100, page)
	if err != nil || len(read) != 5 || len(got) != 8 || total != 8 || got[0].Name != "b1" || got[7].Messages != 0 {
		t.Fatalf("read %v, kept %d of %d: %v", read, len(got), total, err)
	}
}

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

// hostile is a queue name as the text format writes it: `say "hi"\`, a
// newline and a terminal escape, which the format leaves as it is.
const hostile = `say \"hi\"\\\n` + "\x1b[2J"

// A vhost deleted while the broker lists the vhosts comes as [] in place
// of its object: the read goes on with the others. Anything else that is
// not an object still fails the read.
func TestAVhostDeletedDuringTheListIsLeftOut(t *testing.T) {
	t.Parallel()
	var body atomic.Value
	body.Store(`[{"name":"orders","messages":7,"messages_ready":5,"messages_unacknowledged":2},[ ],` +
		`{"name":"billing","messages":3,"messages_ready":3,"messages_unacknowledged":0}]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/vhosts" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	cl, err := New(Options{URL: srv.URL, MetricsURL: MetricsOff, Username: "oncall", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	names, err := cl.vhostNames(context.Background())
	if err != nil || strings.Join(names, ",") != "billing,orders" {
		t.Fatalf("vhostNames = %q, %v", names, err)
	}
	held, err := cl.vhostsHeld(context.Background())
	if err != nil || len(held) != 2 {
		t.Fatalf("vhostsHeld = %+v, %v", held, err)
	}
	if tot := heldTotals(held); tot.Messages != 10 || tot.Ready != 8 || tot.Unacked != 2 {
		t.Fatalf("totals = %+v", tot)
	}

	body.Store(`[{"name":"orders"},["odd"]]`)
	if names, err := cl.vhostNames(context.Background()); err == nil {
		t.Fatalf("a list holding a non-empty list read as %q", names)
	}
}

// ChannelRoom reads the user's max-channels limit and takes away the
// channels its connections hold (another user's do not count); a user
// with no limit, a negative one, or none the API knows (not found) is
// not limited.
func TestChannelRoomIsTheUsersLimitLessItsOpenChannels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		limits      string
		status      int
		wantRoom    int
		wantLimited bool
	}{
		{"a limit", `[{"user":"oncall","value":{"max-channels":10,"max-connections":5}}]`, 200, 6, true},
		{"a limit already reached", `[{"user":"oncall","value":{"max-channels":3}}]`, 200, 0, true},
		{"no limit", `[]`, 200, 0, false},
		{"only a connection limit", `[{"user":"oncall","value":{"max-connections":5}}]`, 200, 0, false},
		{"a negative limit is none", `[{"user":"oncall","value":{"max-channels":-1}}]`, 200, 0, false},
		{"a user of another backend", `{"error":"Object Not Found","reason":"Not Found"}`, 404, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/user-limits/oncall":
					w.WriteHeader(tc.status)
					w.Write([]byte(tc.limits))
				case "/api/connections":
					w.Write([]byte(`[{"user":"oncall","channels":3},{"user":"app","channels":40},[],{"user":"oncall","channels":1}]`))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			cl, err := New(Options{URL: srv.URL, MetricsURL: MetricsOff, Username: "oncall", Password: "s3cret"})
			if err != nil {
				t.Fatal(err)
			}
			room, limited, err := cl.ChannelRoom(context.Background())
			if err != nil || room != tc.wantRoom || limited != tc.wantLimited {
				t.Fatalf("ChannelRoom = %d, %v, %v; want %d, %v", room, limited, err, tc.wantRoom, tc.wantLimited)
			}
		})
	}
}

// A name of "." or ".." cannot be addressed: the broker resolves it as a
// step in the path and answers for another object. warren says so
// rather than decode that other answer.
func TestANameTheBrokerReadsAsAPathStepIsNamed(t *testing.T) {
	c, err := New(Options{URL: "http://127.0.0.1:1", Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"..", "."} {
		// One read, not Queue's two in parallel, whose other (the
		// vhost's list, to a closed port) may fail first.
		var q rawQueue
		err := c.get(context.Background(), "queues/v/"+esc(name), nil, &q)
		if err == nil || !strings.Contains(err.Error(), `named "`+name+`"`) || !strings.Contains(err.Error(), "rename it") {
			t.Errorf("queue %q: %v; want the name said unaddressable", name, err)
		}
	}
}
