package mgmt

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/warrenops/warren/domain"
)

// The broker's Prometheus endpoint (the rabbitmq_prometheus plugin) gives
// every local queue's depth from the tables the queues write their
// figures to, without asking the queues: at 10 000 queues it answers in
// about a fifth of the time the management API takes to sort one page of
// them by depth, which must ask every queue (docs/ARCHITECTURE.md §3.4).
// The first page uses it when the plugin answers and its queues are every
// queue the broker has; otherwise the management API's page is drawn.

// MetricsOff, as Options.MetricsURL, turns the Prometheus endpoint off.
const MetricsOff = "off"

// MetricsMaxQueues bounds the brokers whose first page may come from the
// metrics: their text is about 600 bytes a queue, and above this the
// management API's page of one vhost is the cheaper read.
const MetricsMaxQueues = 20000

// metricsMaxBytes bounds what is read of one scrape.
const metricsMaxBytes = 64 << 20

// metricsHeadStart is how long the management API's page waits for the
// metrics before it is asked for too: about what the metrics of
// MetricsMaxQueues queues take, a fraction of what the page takes.
const metricsHeadStart = 300 * time.Millisecond

// metricsURL is the Prometheus endpoint for a management API at mgmt,
// as configured (MetricsOff: none). Unconfigured, it is the plugin's
// default port on the management API's host, 15692 (15691 with TLS),
// when the management API is on its own default port, 15672 (15671):
// beside a broker on other ports, the default one may be another
// broker's.
func metricsURL(configured string, mgmt *url.URL) string {
	switch configured {
	case MetricsOff:
		return ""
	case "":
		ports := map[string]string{"http/15672": "15692", "https/15671": "15691"}
		port, ok := ports[mgmt.Scheme+"/"+mgmt.Port()]
		if !ok {
			return ""
		}
		return mgmt.Scheme + "://" + net.JoinHostPort(mgmt.Hostname(), port)
	}
	return strings.TrimRight(configured, "/")
}

// metricsDepths reads the depth of every queue local to the node that
// serves the endpoint, GET /metrics/detailed?family=queue_coarse_metrics,
// and that node's name. It answers nil, nil when the endpoint is off or
// does not answer as the plugin does (not enabled, another service on
// the port, authentication refused, no node named): the caller falls
// back on the management API.
func (c *Client) metricsDepths(ctx context.Context) (*nodeDepths, error) {
	if c.metrics == "" {
		return nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metrics+"/metrics/detailed?family=queue_coarse_metrics", nil)
	if err != nil {
		return nil, nil
	}
	if c.metricsAuth {
		// The plugin may require the broker's users (4.x,
		// prometheus.authentication.enabled); the credentials go only to
		// the management API's host.
		req.SetBasicAuth(c.username, c.password)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		return nil, nil
	}
	// A scrape of MetricsMaxQueues queues is about 12 MB; a longer answer
	// is cut, and the queues it then lacks leave the page to the
	// management API.
	d, err := parseQueueDepths(io.LimitReader(resp.Body, metricsMaxBytes))
	if err != nil || d.node == "" {
		return nil, nil
	}
	return d, nil
}

// nodeDepths are the depths of the queues local to one node.
type nodeDepths struct {
	node   string // rabbitmq_identity_info's rabbitmq_node
	queues []depth
}

// depth is one queue's figures in the metrics: a few words a queue, as
// a scrape holds every queue of the node.
type depth struct {
	vhost, name              string
	messages, ready, unacked int64
}

// parseQueueDepths reads the Prometheus text format of the
// queue_coarse_metrics family: one queue per vhost and queue labels,
// with its messages, ready and unacknowledged figures, and the node that
// rabbitmq_identity_info names. Lines of other metrics are skipped; a
// malformed line of those read is an error, since a partial read could
// leave a deep queue out. A scrape of 10 000 queues is 6 MB: a queue's
// labels are decoded once, where it first appears, and found again by
// their text.
func parseQueueDepths(r io.Reader) (*nodeDepths, error) {
	at := map[string]int{}
	var (
		out  []depth
		node string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		brace := bytes.IndexByte(line, '{')
		if brace < 0 {
			continue
		}
		var field int
		switch string(line[:brace]) {
		case "rabbitmq_detailed_queue_messages":
			field = 0
		case "rabbitmq_detailed_queue_messages_ready":
			field = 1
		case "rabbitmq_detailed_queue_messages_unacked":
			field = 2
		case "rabbitmq_identity_info":
			field = 3
		default:
			continue
		}
		labels, value, err := splitLabels(line[brace+1:])
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", truncate(line, 120), err)
		}
		if field == 3 {
			node, _ = label(labels, "rabbitmq_node")
			continue
		}
		i, seen := at[string(labels)]
		if !seen {
			name, ok := label(labels, "queue")
			if !ok || name == "" {
				return nil, fmt.Errorf("metrics line %q: no queue label", truncate(line, 120))
			}
			vhost, _ := label(labels, "vhost")
			i = len(out)
			at[string(labels)] = i
			out = append(out, depth{vhost: vhost, name: name})
		}
		n, ok := count(value)
		if !ok {
			return nil, fmt.Errorf("metrics line %q: value is not a count", truncate(line, 120))
		}
		q := &out[i]
		switch field {
		case 0:
			q.messages = n
		case 1:
			q.ready = n
		default:
			q.unacked = n
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return &nodeDepths{node: node, queues: out}, nil
}

// splitLabels splits `name="value",...} sample` (after the opening
// brace) at the brace that closes the labels, skipping escaped quotes
// inside values.
func splitLabels(b []byte) (labels, rest []byte, err error) {
	quoted := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return b[:i], b[i+1:], nil
		}
	}
	return nil, nil, fmt.Errorf("unterminated labels")
}

// label finds one label's value in labels (`a="x",b="y"`), unescaped as
// the text format escapes it: \\, \" and \n.
func label(labels []byte, name string) (string, bool) {
	for len(labels) > 0 {
		labels = bytes.TrimLeft(labels, " ,")
		key, rest, ok := bytes.Cut(labels, []byte(`="`))
		if !ok {
			return "", false
		}
		var v []byte
		escaped := false
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				escaped = true
				break
			}
		}
		if escaped {
			v = make([]byte, 0, len(rest))
			for i = 0; i < len(rest) && rest[i] != '"'; i++ {
				c := rest[i]
				if c == '\\' && i+1 < len(rest) {
					i++
					if c = rest[i]; c == 'n' {
						c = '\n'
					}
				}
				v = append(v, c)
			}
		} else {
			v = rest[:i]
		}
		if i >= len(rest) {
			return "", false
		}
		if string(bytes.TrimSpace(key)) == name {
			return string(v), true
		}
		labels = rest[i+1:]
	}
	return "", false
}

// count reads a sample's value as a count: digits, or a float the plugin
// may write for a gauge (e.g. "12.0", "1.2e4").
func count(b []byte) (int64, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<62)/10 {
			f, err := strconv.ParseFloat(string(b), 64)
			if err != nil || f < 0 || f > 1<<62 {
				return 0, false
			}
			return int64(f), true
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// deepestOf returns the size deepest of qs in vhost ("" for all), deepest
// first and by name among equals, as queues with their depths only, and
// how many queues vhost holds.
func deepestOf(qs []depth, vhost string, size int) ([]domain.Queue, int) {
	in := make([]depth, 0, len(qs))
	for _, q := range qs {
		if vhost == "" || q.vhost == vhost {
			in = append(in, q)
		}
	}
	sort.Slice(in, func(a, b int) bool {
		if in[a].messages != in[b].messages {
			return in[a].messages > in[b].messages
		}
		if in[a].vhost != in[b].vhost {
			return in[a].vhost < in[b].vhost
		}
		return in[a].name < in[b].name
	})
	out := make([]domain.Queue, 0, min(len(in), size))
	for _, d := range in[:min(len(in), size)] {
		out = append(out, domain.Queue{Vhost: d.vhost, Name: d.name, Messages: d.messages, Ready: d.ready, Unacked: d.unacked})
	}
	return out, len(in)
}

// MetricsReport says what the first page can read from the broker's
// Prometheus endpoint, for `config check`: where it is ("" when off or
// not known) and, when it answers as the plugin does, the node it names
// and how many queues it reports. Err says why it is not read.
type MetricsReport struct {
	URL    string
	Node   string
	Queues int
	Err    error
}

// MetricsURL is the Prometheus endpoint the first page reads, "" for
// none (Options.MetricsURL).
func (c *Client) MetricsURL() string { return c.metrics }

// Metrics reads the endpoint once, as the first page would.
func (c *Client) Metrics(ctx context.Context) MetricsReport {
	r := MetricsReport{URL: c.metrics}
	if c.metrics == "" {
		return r
	}
	d, err := c.metricsDepths(ctx)
	switch {
	case err != nil:
		r.Err = err
	case d == nil:
		r.Err = fmt.Errorf("%s does not answer as the rabbitmq_prometheus plugin does (rabbitmq-plugins enable rabbitmq_prometheus)", c.metrics)
	default:
		r.Node, r.Queues = d.node, len(d.queues)
	}
	return r
}
