// Package mgmt reads the RabbitMQ management HTTP API into a
// domain.Snapshot: the broker, its nodes and alarms, queues with their DLQ
// pairing, channels and consumers. It never imports the UI.
package mgmt

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/nodes"
)

// Options say where the management API is and as whom to call it.
type Options struct {
	URL string // http:// or https://, e.g. http://127.0.0.1:15672
	// Fallbacks are the management APIs of the cluster's other nodes,
	// read when URL's does not answer (docs/ARCHITECTURE.md §6).
	Fallbacks []string
	// MetricsURL is the broker's Prometheus endpoint, read for a fast
	// first page (metrics.go): "" for the management host on the
	// plugin's default port, MetricsOff for none.
	MetricsURL string
	Username   string
	Password   string
	TLS        *tls.Config
	// Timeout bounds each HTTP request; 15 s when zero.
	Timeout time.Duration
	// DLQOverrides pin DLQ pairings from config (docs/ARCHITECTURE.md §6), for every
	// snapshot and queue read by this client.
	DLQOverrides []domain.DLQOverride
	// ParkingQueues are the parking queues config names (an empty Vhost
	// matches any), besides each DLQ's default one.
	ParkingQueues []domain.QueueRef
	// PasswordHint ends a bad-credentials error: what to check, naming
	// where the password came from (config.Context.PasswordHint).
	PasswordHint string
	// Learned are error-queue pairings learned from messages before
	// (Learn), and OnLearn is told of each new one, to keep them.
	Learned []domain.DLQOverride
	OnLearn func(domain.DLQOverride)
}

// DefaultTimeout bounds one management API request when Options.Timeout
// is zero. Listing 10 000 queues with statistics takes seconds.
const DefaultTimeout = 15 * time.Second

// Client reads the management API. Reads go through a raw HTTP client
// that takes a context and keeps connections alive (rabbit-hole opens a
// new connection per request and takes no context, which matters for a
// dashboard refreshing every 2 s); rabbit-hole's client is kept for
// writes such as declaring vhosts and policies. Safe for concurrent use.
type Client struct {
	where    string // the first node's URL without credentials
	nodes    *nodes.Set
	username string
	password string
	pwHint   string
	http     *http.Client
	rh       *rabbithole.Client
	pins     []domain.DLQOverride
	parking  []domain.QueueRef
	metrics  string // the Prometheus endpoint, "" for none
	// metricsAuth: the endpoint is on the management API's host, which
	// may be sent the credentials.
	metricsAuth bool

	mu      sync.Mutex
	learned []domain.DLQOverride // error queues paired by what their messages say
	onLearn func(domain.DLQOverride)
	version string
	// detailedMissing is set when a 3.13+ broker answered 404 to
	// /api/queues/detailed (the feature flag is not enabled yet), [0],
	// or to its per-vhost form /api/queues/detailed/VHOST, [1].
	detailedMissing [2]bool
	topo            topoCache
	// rowStats are the visible rows' statistics, reused for one
	// statistics interval (see ratesFor).
	rowStats map[domain.QueueRef]rowStats
	// lastSnapshot is how long the last snapshot took (topologyReuse).
	lastSnapshot time.Duration
	// overview is the last /api/overview, reused by Snapshot (see
	// recentOverview); overviewAt is when it was asked for and
	// overviewTook how long it took.
	overview     *domain.Overview
	overviewAt   time.Time
	overviewTook time.Duration
}

// New returns a client for o. It does not contact the broker.
func New(o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("management_url %q is not a URL such as http://127.0.0.1:15672", redact(o.URL))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("management_url %s: scheme must be http or https", redact(o.URL))
	}
	user, pass := o.Username, o.Password
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && pass == "" {
			pass = p
		}
		u.User = nil
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = o.TLS
	tr.MaxIdleConnsPerHost = maxParallel
	rh, err := rabbithole.NewTLSClient(u.String(), user, pass, tr)
	if err != nil {
		return nil, fmt.Errorf("management_url %s: %w", u, err)
	}
	rh.SetTimeout(timeout)
	more := make([]string, 0, len(o.Fallbacks))
	for _, f := range o.Fallbacks {
		fu, err := url.Parse(strings.TrimRight(f, "/"))
		if err != nil || (fu.Scheme != "http" && fu.Scheme != "https") || fu.Host == "" {
			return nil, fmt.Errorf("fallback management URL %q is not an http:// or https:// URL", redact(f))
		}
		fu.User = nil
		more = append(more, fu.String())
	}
	metrics := metricsURL(o.MetricsURL, u)
	mu, _ := url.Parse(metrics)
	return &Client{
		// The credentials go to the metrics endpoint only on the
		// management API's host, and never in clear text when the
		// management API is reached over TLS.
		metricsAuth: mu != nil && mu.Hostname() == u.Hostname() && (mu.Scheme == "https" || u.Scheme == "http"),
		where:       u.String(),
		nodes:       nodes.New(u.String(), more),
		username:    user,
		password:    pass,
		pwHint:      cmp.Or(o.PasswordHint, "check username and the password variable (password_env)"),
		http:        &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: refuseRedirect},
		rh:          rh,
		pins:        o.DLQOverrides,
		learned:     append([]domain.DLQOverride(nil), o.Learned...),
		onLearn:     o.OnLearn,
		metrics:     metrics,
		parking:     o.ParkingQueues,
	}, nil
}

// refuseRedirect stops at a redirect instead of following it: Go's
// client would send the broker's credentials on to the new address when
// its host matches, even over plain HTTP or to another port.
func refuseRedirect(req *http.Request, via []*http.Request) error {
	return &redirectError{to: redact(req.URL.String())}
}

type redirectError struct{ to string }

func (e *redirectError) Error() string {
	return "redirects to " + e.to + "; warren does not send the broker's credentials on: set the URL to where it redirects"
}

// maxParallel bounds concurrent requests of one snapshot.
const maxParallel = 8

// rowParallel bounds the concurrent reads of single queues (the rows on
// screen, their statistics). Each costs the broker about 2 ms; more at
// once than it has cores only queue up inside it, so a dashboard's reads
// of 40 rows cost it the same in a third of the requests' added-up time
// and take about 40 ms against a local broker.
const rowParallel = 2

// URL returns the management API address the config names first,
// without credentials.
func (c *Client) URL() string { return c.where }

// Serving says which node's management API answered last: the first
// the config names, or a fallback and why the first did not answer.
func (c *Client) Serving() nodes.Serving { return c.nodes.Serving() }

// Admin returns the rabbit-hole client for writes (vhosts, policies,
// permissions), used by the demo and by tests.
func (c *Client) Admin() *rabbithole.Client { return c.rh }

// get decodes GET /api/path?q into v.
func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	return c.read(ctx, path, q, func(r io.Reader) error { return json.NewDecoder(r).Decode(v) })
}

// read sends GET /api/path?q and hands a successful answer's body to
// decode: to the node that answered last, and to the cluster's other
// nodes in turn while one does not answer.
func (c *Client) read(ctx context.Context, path string, q url.Values, decode func(io.Reader) error) error {
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			// The broker's HTTP server resolves the step before it
			// routes the request, whatever its escaping: /api/queues/v/..
			// answers as /api/queues/v, another object's answer.
			return &domain.Error{Where: c.where, Msg: fmt.Sprintf(
				"management API at %s cannot address a vhost, queue or exchange named %q: the broker reads it as a step in the URL's path (%s); rename it, or read it with rabbitmqctl",
				c.where, seg, pathOnly(path))}
		}
	}
	down := func(err error) bool { return ctx.Err() == nil && nodeDown(err) }
	_, err := nodes.Try(c.nodes, down, func(where string) (struct{}, error) {
		return struct{}{}, c.readAt(ctx, where, path, q, decode)
	})
	return err
}

// nodeDown says whether err is a node not answering: nothing listens,
// the connection breaks or times out, or the answer is a 502, 503 or 504
// (a node starting or stopping, or a proxy in front of one that is down).
// Bad credentials, a missing object or a TLS setting the node refuses
// are the cluster's answer, not the node's.
func nodeDown(err error) bool {
	var de *domain.Error
	if !errors.As(err, &de) {
		return false
	}
	switch de.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	if de.Kind != domain.ErrUnreachable || de.Err == nil {
		return false
	}
	var (
		oe *net.OpError
		to interface{ Timeout() bool }
	)
	switch {
	case errors.As(de.Err, &oe) && oe.Op == "dial",
		errors.As(de.Err, &to) && to.Timeout():
		return true
	}
	return errors.Is(de.Err, syscall.ECONNRESET) || errors.Is(de.Err, io.EOF) || errors.Is(de.Err, io.ErrUnexpectedEOF)
}

// readAt is read from the management API at where.
func (c *Client) readAt(ctx context.Context, where, path string, q url.Values, decode func(io.Reader) error) error {
	target := where + "/api/" + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("management API request %s: %w", path, err)
	}
	req.SetBasicAuth(c.username, c.password)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return c.statusError(resp, where, path)
	}
	if err := decode(resp.Body); err != nil {
		return fmt.Errorf("management API at %s: decoding %s: %w", where, pathOnly(path), err)
	}
	return nil
}

// esc escapes one path segment (a vhost, a queue or an exchange name);
// "/" in a vhost becomes %2F as the API expects.
func esc(s string) string { return url.PathEscape(s) }

func (c *Client) transportError(ctx context.Context, where string, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// The url.Error repeats the request URL; the cause alone reads better.
		err = ue.Err
	}
	var (
		to  interface{ Timeout() bool }
		rec tls.RecordHeaderError
	)
	unreachable := func(format string, args ...any) error {
		return &domain.Error{Kind: domain.ErrUnreachable, Where: where, Err: err, Msg: fmt.Sprintf(format, args...)}
	}
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return unreachable("management API at %s %v", where, redirect)
	case errors.As(err, &to) && to.Timeout():
		return unreachable("management API at %s did not answer in time (%v); is the broker overloaded?", where, err)
	case errors.As(err, &rec), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// net/http turns the TLS record error into that text, no sentinel.
		return unreachable("management API at %s does not speak TLS; use an http:// management_url", where)
	}
	if msg, ok := config.TLSProblem(err); ok {
		return unreachable("management API at %s: TLS refused: %s", where, msg)
	}
	https := strings.HasPrefix(where, "https://")
	if msg, ok := config.MissingClientCert(c.http.Transport.(*http.Transport).TLSClientConfig, err); ok && https {
		return unreachable("management API at %s: TLS refused: %s (%v)", where, msg, err)
	}
	if !https && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "malformed HTTP")) {
		// Something listens there, and it does not speak HTTP.
		return unreachable("management API at %s: what answers there is not an HTTP server (%v); is this the management plugin's port? (15672 by default)", where, err)
	}
	return unreachable("management API at %s unreachable: %v; is the management plugin enabled? (rabbitmq-plugins enable rabbitmq_management)", where, err)
}

func (c *Client) statusError(resp *http.Response, where, path string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var r struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(body, &r)
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if strings.Contains(r.Reason, "Not management user") {
			return &domain.Error{Kind: domain.ErrUnauthorized, Where: where, Status: resp.StatusCode,
				Msg: fmt.Sprintf("management API at %s: user %q has no management tag; give it the monitoring or management tag", where, c.username)}
		}
		return &domain.Error{Kind: domain.ErrUnauthorized, Where: where, Status: resp.StatusCode,
			Msg: fmt.Sprintf("management API at %s: bad credentials for user %q; %s", where, c.username, c.pwHint)}
	case http.StatusForbidden:
		return &domain.Error{Kind: domain.ErrForbidden, Where: where, Status: resp.StatusCode,
			Msg: fmt.Sprintf("management API at %s: user %q may not read %s", where, c.username, pathOnly(path))}
	case http.StatusNotFound:
		return &domain.Error{Kind: domain.ErrNotFound, Where: where, Status: resp.StatusCode,
			Msg: fmt.Sprintf("management API at %s: %s not found", where, pathOnly(path))}
	}
	reason := r.Reason
	if reason == "" {
		reason = strings.TrimSpace(string(body))
	}
	return &domain.Error{Where: where, Status: resp.StatusCode, Reason: reason,
		Msg: fmt.Sprintf("management API at %s: %s answered %d: %s", where, pathOnly(path), resp.StatusCode, reason)}
}

// pathOnly names an API path for messages, with escapes undone.
func pathOnly(p string) string {
	if s, err := url.PathUnescape(p); err == nil {
		p = s
	}
	return "/api/" + p
}

// redact removes credentials from a URL given by the operator.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + raw[i+1:]
		}
	}
	return raw
}
