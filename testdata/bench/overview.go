package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui"
	"github.com/warrenops/warren/ui/overview"
	"github.com/warrenops/warren/ui/styles"
)

// Terminal size of the measured frames: a common laptop terminal.
const (
	termWidth  = 120
	termHeight = 40
)

// overview measures the dashboard on n queues, half of them
// dead-lettering into the other half through one exchange: in one vhost,
// or spread over -vhosts of them, in which case the dashboard shows every
// vhost and the anchor is the plain list of each vhost, added up.
func (b *bench) overview(n int) ([]row, error) {
	k := max(b.cfg.vhosts, 1)
	var vhosts []string
	defer func() {
		for _, vh := range vhosts {
			b.deleteVhost(vh)
		}
	}()
	if len(b.cfg.reuse) > 0 {
		// Vhosts left by an earlier run (-keep): measured as they are,
		// and left in place.
		k = len(b.cfg.reuse)
		vhosts = nil
		n = 0
		for _, vh := range b.cfg.reuse {
			var qs []struct{}
			if _, err := b.mgmt(http.MethodGet, "/api/queues/"+url.PathEscape(vh)+"?disable_stats=true&columns=name", nil, &qs); err != nil {
				return nil, err
			}
			n += len(qs)
		}
		b.logf("measuring %d queues in %d vhosts left by an earlier run", n, k)
	}
	for i := range k {
		if len(b.cfg.reuse) > 0 {
			break
		}
		per := n / k
		if i < n%k {
			per++
		}
		vh, err := b.newVhost(fmt.Sprintf("overview-%d", n))
		if err != nil {
			return nil, err
		}
		vhosts = append(vhosts, vh)
		b.logf("declaring %d queues in %s", per, vh)
		start := time.Now()
		if err := b.declareOverview(vh, per); err != nil {
			return nil, err
		}
		b.logf("declared %d queues in %s", per, time.Since(start).Round(time.Millisecond))
		// Until the broker has emitted every queue's statistics once, the
		// plain list is cheaper than it will be on a live broker.
		if err := b.waitStats(vh, per); err != nil {
			return nil, err
		}
	}
	measured := vhosts
	if len(b.cfg.reuse) > 0 {
		measured = b.cfg.reuse
	}
	label := thousands(n) + " queues"
	shown := measured[0]
	if k > 1 {
		label += fmt.Sprintf(" in %d vhosts", k)
		shown = ""
	}
	memTarget := 80.0
	if n > 20000 {
		memTarget = 200
	}

	b.logf("refreshing the overview through the recording proxy")
	r, err := b.refresh(shown, measured)
	if err != nil {
		return nil, err
	}
	anchor := "plain call"
	if k > 1 {
		anchor = "plain calls"
	}
	rows := []row{
		versus("refresh broker time (mean over the cycle), "+label, ms(r.mean), ms(r.plain.took), fmtMs, &cmp{"<=", 0.25}),
		info("  refreshes measured, "+label, fmt.Sprintf("%d", r.refreshes), fmt.Sprintf("%d listed every queue", r.lists)),
		versus("  a refresh between two lists (median), "+label, ms(r.between.took), ms(r.plain.took), fmtMs, nil),
		versus("  median refresh, "+label, ms(r.warm.took), ms(r.plain.took), fmtMs, nil),
		versus("refresh bytes (median), "+label, float64(r.warm.bytes), float64(r.plain.bytes), fmtBytes, nil),
		info("  refresh wall time (median), "+label, fmtMs(ms(r.warm.wall)), fmt.Sprintf("%d requests", r.warm.requests)),
		info("  "+anchor+" wall time, "+label, fmtMs(ms(r.plain.wall)), fmt.Sprintf("%d requests", r.plain.requests)),
		versus("  first refresh (topology read), "+label, ms(r.cold.took), ms(r.plain.took), fmtMs, nil),
		info("  applying a snapshot (Update), "+label, fmtMs(ms(r.apply)), ""),
		absolute("frame render, "+label, ms(r.frame), fmtMs, "", cmp{"<", 5}),
	}

	b.logf("starting the dashboard in a pseudo-terminal")
	d, err := b.dashboard(shown)
	if err != nil {
		return rows, err
	}
	page, err := b.cheapestPage(shown)
	if err != nil {
		return rows, err
	}
	deepest, err := b.deepestPage(measured[0])
	if err != nil {
		return rows, err
	}
	scrape, scraped := b.metricsScrape()
	firstTarget := 300.0
	if n > 20000 {
		firstTarget = 1500
	}
	rows = append(rows,
		info("  the broker's cheapest list of any queue (40-row page), "+label, fmtMs(ms(page)), ""),
		info("  the broker's page of the 100 deepest queues of one vhost, "+label, fmtMs(ms(deepest)), "what the first frame waits for without metrics"),
		info("  the broker's metrics of every queue's depth (one scrape), "+label, scraped, scrape),
		absolute("first frame with data (median of 3 starts), "+label, ms(d.firstFrame), fmtMs,
			fmt.Sprintf("starts %s; pty start %s", d.firstFrames, fmtMs(ms(d.ptyStart))), cmp{"<", firstTarget}),
		info("  every queue on screen, "+label, fmtMs(ms(d.fullList)), ""),
		absolute("dashboard resident memory, "+label, d.rssMiB, fmtMiB, "", cmp{"<", memTarget}),
	)
	return rows, nil
}

func (b *bench) declareOverview(vh string, n int) error {
	conn, err := b.dial(vh)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := ch.ExchangeDeclare("dlx", "direct", true, false, false, false, nil); err != nil {
		return err
	}
	ch.Close()
	qs := make([]declaration, 0, n)
	for i := 0; i < n/2; i++ {
		name := fmt.Sprintf("svc-%05d.events", i)
		qs = append(qs,
			declaration{name: name + ".dlq", bindKey: name},
			declaration{name: name, args: amqp.Table{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": name}})
	}
	if n%2 == 1 {
		qs = append(qs, declaration{name: "svc-odd.events"})
	}
	return declareAll(conn, "dlx", qs)
}

type refreshCost struct {
	took     time.Duration // broker time: the requests' durations added up
	bytes    int64
	wall     time.Duration
	requests int
}

type refreshResult struct {
	cold, warm, plain refreshCost
	// mean is the mean broker time of the steady refreshes: the refreshes
	// that list every queue count in it beside those that read the rows
	// on screen; between is the median of the latter.
	mean             time.Duration
	between          refreshCost
	refreshes, lists int
	apply, frame     time.Duration
}

// refresh drives the real root model with a management client pointed at
// the recording proxy: the first fetch (which reads the topology), then
// steady refreshes, each a tick followed by the fetch of the cheap list
// and of the visible rows' rates. The anchor is one plain
// GET /api/queues/VHOST through the same proxy, with the same client
// defaults (gzip accepted).
func (b *bench) refresh(vh string, anchors []string) (*refreshResult, error) {
	client, err := mgmt.New(mgmt.Options{URL: b.proxy.URL, Username: b.cfg.user, Password: b.cfg.password})
	if err != nil {
		return nil, err
	}
	// The root model with the overview the composition root gives it.
	home := overview.New(overview.Options{Lister: client, Styles: styles.Default(), Refresh: 2 * time.Second, Vhost: vh})
	var m tea.Model = ui.New(ui.Options{Context: "bench", Overview: home, Refresh: 2 * time.Second, Vhost: vh})
	m, _ = m.Update(tea.WindowSizeMsg{Width: termWidth, Height: termHeight})
	res := &refreshResult{}

	b.proxy.rec.take()
	start := time.Now()
	// The first page comes first, then the first list it asks for: of
	// every queue, or over several vhosts one vhost after another, each
	// asked for as the one before comes in.
	cmd, err := stepUntil(&m, m.Init(), "snapshotMsg", 3)
	if err != nil {
		return nil, err
	}
	for strings.Contains(m.View(), " to go (") {
		if cmd, err = stepUntil(&m, cmd, "snapshotMsg", 3); err != nil {
			return nil, err
		}
	}
	cold := b.proxy.rec.take()
	res.cold = costOf(cold, time.Since(start))
	for _, e := range cold {
		b.logf("first refresh: +%s %s took %s, %s", fmtMs(ms(e.start.Sub(start))), e.path, fmtMs(ms(e.took)), fmtBytes(float64(e.bytes)))
	}
	// The first list asks for the rows now on screen, at once or at the
	// next tick.
	if cmd, err = stepUntil(&m, cmd, "snapshotMsg", 3); err != nil {
		return nil, err
	}
	// The plain calls come before and after the refreshes, not between
	// them: the dashboard decides when to list every queue by the time
	// since its last list, which calls in between would stretch.
	var plain []refreshCost
	plainCalls := func(n int) error {
		for range n {
			c, err := b.plainLists(anchors)
			if err != nil {
				return err
			}
			plain = append(plain, c)
		}
		return nil
	}
	if err := plainCalls(2); err != nil {
		return nil, err
	}
	// Steady refreshes at the dashboard's own pace (each tick waits the
	// refresh interval), for at least minRefreshes and until every queue
	// has been listed twice more, so the mean covers whole cycles.
	var warm, between []refreshCost
	var applies []time.Duration
	lists := 0
	steady := time.Now()
	for len(warm) < minRefreshes || lists < 2 {
		if time.Since(steady) > maxSteady {
			return nil, fmt.Errorf("the dashboard listed queues %d times in %s of refreshes, want 2", lists, maxSteady)
		}
		// The model answers each message with its next command: a tick,
		// which waits out the refresh, or a fetch at once (rows that came
		// into view, vhosts listed back to back). A command that fetched
		// is a refresh.
		b.proxy.rec.take()
		start := time.Now()
		msgs := run(cmd)
		wall := time.Since(start)
		es := b.proxy.rec.take()
		var next []tea.Cmd
		fetched := false
		for _, msg := range msgs {
			var c tea.Cmd
			if typeName(msg) == "snapshotMsg" {
				fetched = true
				t := time.Now()
				m, c = m.Update(msg)
				applies = append(applies, time.Since(t))
			} else {
				m, c = m.Update(msg)
			}
			next = append(next, c)
		}
		if len(msgs) == 0 {
			return nil, errors.New("the overview stopped polling")
		}
		cmd = tea.Batch(next...)
		if !fetched {
			continue
		}
		c := costOf(es, wall)
		warm = append(warm, c)
		listed := listsQueues(es)
		if listed {
			lists++
		} else {
			between = append(between, c)
		}
		b.logf("refresh (%s): %s", map[bool]string{true: "lists queues", false: "rows on screen"}[listed], breakdown(es))
	}
	if err := plainCalls(3); err != nil {
		return nil, err
	}
	res.refreshes, res.lists = len(warm), lists
	for _, w := range warm {
		res.mean += w.took / time.Duration(len(warm))
	}
	res.warm = medianCost(warm)
	if len(between) > 0 {
		res.between = medianCost(between)
	}
	res.apply = median(applies)

	var frames []time.Duration
	for range 50 {
		t := time.Now()
		_ = m.View()
		frames = append(frames, time.Since(t))
	}
	res.frame = median(frames)

	res.plain = medianCost(plain)
	return res, nil
}

// minRefreshes and maxSteady bound the steady refreshes measured.
const (
	minRefreshes = 10
	maxSteady    = 4 * time.Minute
)

// listsQueues reports whether a refresh's requests listed queues (a path
// /api/queues or /api/queues/VHOST, a page or not), rather than reading
// queues one by one.
func listsQueues(es []exchange) bool {
	for _, e := range es {
		p, _, _ := strings.Cut(e.path, "?")
		parts := strings.Split(strings.Trim(strings.TrimPrefix(p, "/api/"), "/"), "/")
		if parts[0] == "queues" && (len(parts) == 1 || len(parts) == 2 || parts[1] == "detailed" && len(parts) <= 3) {
			return true
		}
	}
	return false
}

// plainLists is one GET /api/queues/VHOST through the proxy per vhost,
// one after the other, added up.
func (b *bench) plainLists(vhosts []string) (refreshCost, error) {
	var sum refreshCost
	for _, vh := range vhosts {
		c, err := b.plainList(vh)
		if err != nil {
			return refreshCost{}, err
		}
		sum.took += c.took
		sum.bytes += c.bytes
		sum.wall += c.wall
		sum.requests += c.requests
	}
	return sum, nil
}

// plainList is one GET /api/queues/VHOST through the proxy.
func (b *bench) plainList(vh string) (refreshCost, error) {
	req, err := http.NewRequest(http.MethodGet, b.proxy.URL+"/api/queues/"+url.PathEscape(vh), nil)
	if err != nil {
		return refreshCost{}, err
	}
	req.SetBasicAuth(b.cfg.user, b.cfg.password)
	b.proxy.rec.take()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return refreshCost{}, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return refreshCost{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return refreshCost{}, fmt.Errorf("GET /api/queues/%s: %s", vh, resp.Status)
	}
	return costOf(b.proxy.rec.take(), time.Since(start)), nil
}

func costOf(es []exchange, wall time.Duration) refreshCost {
	took, n := total(es)
	return refreshCost{took: took, bytes: n, wall: wall, requests: len(es)}
}

// stepUntil is step for a message that comes after others: it runs the
// commands the model answers with, rounds times at most, until want
// comes.
func stepUntil(m *tea.Model, cmd tea.Cmd, want string, rounds int) (tea.Cmd, error) {
	for range rounds {
		var next []tea.Cmd
		for _, msg := range run(cmd) {
			var c tea.Cmd
			*m, c = (*m).Update(msg)
			if typeName(msg) == want {
				return c, nil
			}
			next = append(next, c)
		}
		cmd = tea.Batch(next...)
	}
	return nil, fmt.Errorf("the overview did not answer with a %s", want)
}

// run executes cmd and returns its messages, batches flattened.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range batch {
			out = append(out, run(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// typeName is the unqualified type of a message; the overview's message
// types are unexported, so the harness recognises them by name.
func typeName(msg tea.Msg) string {
	s := fmt.Sprintf("%T", msg)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return s[i+1:]
		}
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// medianCost is the refresh of median broker time.
func medianCost(cs []refreshCost) refreshCost {
	s := slices.Clone(cs)
	slices.SortFunc(s, func(a, b refreshCost) int { return int(a.took - b.took) })
	return s[len(s)/2]
}

// waitStats polls until the plain list shows every queue's depth and
// message rates: the statistics the plain call returns once the broker
// has emitted them (every collect_statistics_interval, 5 s by default).
func (b *bench) waitStats(vh string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	path := "/api/queues/" + url.PathEscape(vh) + "?columns=name,messages,messages_details"
	for {
		var qs []map[string]any
		if _, err := b.mgmt(http.MethodGet, path, nil, &qs); err != nil {
			return err
		}
		ready := 0
		for _, q := range qs {
			if q["messages_details"] != nil {
				ready++
			}
		}
		if len(qs) == n && ready == n {
			return nil
		}
		if time.Now().After(deadline) {
			// A broker busy with 100 000 new queues has been seen to
			// leave a few without statistics for minutes: up to 1 % is
			// let through, and said.
			if len(qs) == n && ready >= n-n/100 {
				b.logf("statistics of %d of %d queues after 2 minutes: measuring anyway", ready, n)
				return nil
			}
			return fmt.Errorf("statistics of %d of %d queues after 2 minutes", ready, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// breakdown sums a refresh's requests by kind, for the log.
func breakdown(es []exchange) string {
	type sum struct {
		n    int
		took time.Duration
		size int64
	}
	by := map[string]*sum{}
	var kinds []string
	for _, e := range es {
		k := e.path
		if parts := strings.Split(strings.TrimPrefix(e.path, "/api/"), "/"); len(parts) > 2 && parts[0] == "queues" {
			k = "/api/queues/VHOST/NAME"
		}
		if by[k] == nil {
			by[k] = &sum{}
			kinds = append(kinds, k)
		}
		by[k].n++
		by[k].took += e.took
		by[k].size += e.bytes
	}
	var out []string
	for _, k := range kinds {
		s := by[k]
		out = append(out, fmt.Sprintf("%s ×%d %s %s", k, s.n, fmtMs(ms(s.took)), fmtBytes(float64(s.size))))
	}
	return strings.Join(out, "; ")
}

// deepestPage times the page the dashboard's first frame asks of a vhost:
// its 100 deepest queues without statistics, sorted by the broker, which
// asks every queue of the vhost for its depth to sort them. Each read
// waits long enough for the broker's caches to have expired, as at a
// dashboard's start.
func (b *bench) deepestPage(vh string) (time.Duration, error) {
	var took []time.Duration
	for range 3 {
		time.Sleep(3 * time.Second)
		start := time.Now()
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		path := "/api/queues/" + url.PathEscape(vh) + "?page=1&page_size=100&sort=messages&sort_reverse=true&disable_stats=true&enable_queue_totals=true"
		if _, err := b.mgmt(http.MethodGet, path, nil, &page); err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
	}
	return median(took), nil
}

// metricsScrape times the read of every queue's depth from the broker's
// Prometheus endpoint, which the first page uses when it names every
// queue (median of three), and says what the endpoint is.
func (b *bench) metricsScrape() (string, string) {
	// The endpoint the dashboard reads: -metrics, else warren's default.
	c, err := mgmt.New(mgmt.Options{URL: b.cfg.mgmtURL, MetricsURL: b.cfg.metricsURL})
	if err != nil {
		return err.Error(), "—"
	}
	where := c.MetricsURL()
	if where == "" {
		return "none (-metrics)", "—"
	}
	var took []time.Duration
	var size int64
	for range 3 {
		start := time.Now()
		resp, err := http.Get(where + "/metrics/detailed?family=queue_coarse_metrics")
		if err != nil {
			return where + ": " + err.Error(), "—"
		}
		size, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("%s: %s", where, resp.Status), "—"
		}
		took = append(took, time.Since(start))
	}
	return fmt.Sprintf("%s, %s; read by the first page of a broker of up to 20 000 queues", where, fmtBytes(float64(size))), fmtMs(ms(median(took)))
}

// cheapestPage times the least a client can ask to list some queues of
// the vhost: one page of 40 without statistics. Even this request makes
// the broker list every queue of the vhost, so it bounds from below the
// time to any first frame with data.
func (b *bench) cheapestPage(vh string) (time.Duration, error) {
	var took []time.Duration
	for range 3 {
		start := time.Now()
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		path := "/api/queues?disable_stats=true&page=1&page_size=40"
		if vh != "" {
			path = "/api/queues/" + url.PathEscape(vh) + "?disable_stats=true&page=1&page_size=40"
		}
		if _, err := b.mgmt(http.MethodGet, path, nil, &page); err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
	}
	return median(took), nil
}
