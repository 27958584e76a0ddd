package mgmt

import (
	"context"
	"errors"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/warrenops/warren/domain"
)

// FirstPage reads the size deepest queues (of vhost, "" for all) without
// statistics, with the nodes and the figures the broker keeps counted: a
// partial snapshot for a first screen. On a large broker it answers in a
// fraction of the full list's time, since the broker sends one page; it
// carries no rates or DLQ pairing. Partial is set and QueueTotal says how
// many queues there are; over every vhost, Vhosts names them.
//
// For every vhost, the broker would sort all its queues for one page (on
// 100 000 queues, 15 s). Instead the vhosts are read in order of the
// messages they hold, deepest first, and the page of each is merged in
// until a vhost holds no more messages than the shallowest queue kept:
// none of its queues can be deeper. On a broker whose messages sit in
// one vhost that is one page of that vhost.
//
// On a broker of at most MetricsMaxQueues queues whose Prometheus
// endpoint answers, the page is read from its metrics as well, and
// whichever comes first is used: the metrics give every queue's depth
// without asking the queues. The management API's page starts once the
// metrics have failed or after metricsHeadStart. The metrics are used
// only when they come from the node the management API answers from and
// name as many queues as the broker counts, since the endpoint reports
// the queues local to its node; the snapshot's FromMetrics says so.
//
// The header's figures do not wait for /api/overview, which counts every
// queue record to answer (1-2 s at 100 000 queues, longer than the page
// of one vhost): the counts come from the overview without statistics,
// the message totals from the vhosts' own, and the rates are unknown
// (Overview.RatesUnknown) until the first full snapshot.
func (c *Client) FirstPage(ctx context.Context, vhost string, size int) (*domain.Snapshot, error) {
	start := time.Now()
	size = max(size, 1)
	var (
		ov     *domain.Overview
		nodes  []domain.Node
		vs     []vhostHeld
		queues []domain.Queue
		total  int
		// The metrics' page and the management API's race: the first to
		// finish cancels the other, whose cancellation is then no error.
		pageOK                  bool
		fromMetrics             []domain.Queue
		metricsTotal            int
		pageCtx, stopPage       = context.WithCancel(ctx)
		metricsCtx, stopMetrics = context.WithCancel(ctx)
		metricsSettled          = make(chan struct{})
		lost                    = func(race context.Context, err error) error {
			if err != nil && race.Err() != nil && ctx.Err() == nil {
				return nil
			}
			return err
		}
	)
	defer stopPage()
	defer stopMetrics()
	// pageWanted holds the management API's page back while the metrics
	// have their head start: on a broker of a few cores the page, which
	// asks every queue, slows the metrics' read. It reports whether the
	// page is still wanted.
	pageWanted := func() bool {
		if c.metrics != "" {
			t := time.NewTimer(metricsHeadStart)
			defer t.Stop()
			select {
			case <-metricsSettled:
			case <-t.C:
			case <-pageCtx.Done():
			}
		}
		return pageCtx.Err() == nil
	}
	paged := func(err error) error {
		if err == nil {
			pageOK = true
			stopMetrics()
		}
		return lost(pageCtx, err)
	}
	err := parallel(ctx,
		func(ctx context.Context) (err error) {
			defer close(metricsSettled)
			if ov, err = c.countsOverview(ctx); err != nil || c.metrics == "" || ov.QueueCount > MetricsMaxQueues {
				return err
			}
			d, err := c.metricsDepths(metricsCtx)
			if err != nil || d == nil || d.node != ov.Node || len(d.queues) == 0 || len(d.queues) != ov.QueueCount {
				return lost(metricsCtx, err)
			}
			fromMetrics, metricsTotal = deepestOf(d.queues, vhost, size)
			stopPage()
			return nil
		},
		func(ctx context.Context) (err error) { nodes, err = c.Nodes(ctx); return err },
		func(ctx context.Context) (err error) {
			if vhost != "" {
				// The page does not need the vhosts' counts: both at once.
				return parallel(ctx,
					func(ctx context.Context) (err error) { vs, err = c.vhostsHeld(ctx); return err },
					func(context.Context) (err error) {
						if !pageWanted() {
							return nil
						}
						queues, total, err = c.deepestPage(pageCtx, vhost, size)
						return paged(err)
					})
			}
			if vs, err = c.vhostsHeld(ctx); err != nil || !pageWanted() {
				return err
			}
			if len(vs) < 2 {
				queues, total, err = c.deepestPage(pageCtx, "", size)
				return paged(err)
			}
			queues, total, err = deepestAcross(pageCtx, vs, size, c.deepestPage)
			return paged(err)
		},
	)
	if err != nil {
		return nil, err
	}
	if !pageOK && fromMetrics != nil {
		queues, total = fromMetrics, metricsTotal
	}
	ov.Totals = heldTotals(vs)
	if vhost == "" && ov.QueueCount > total {
		// The pages skipped vhosts; the overview counts every queue.
		total = ov.QueueCount
	}
	s := &domain.Snapshot{Overview: *ov, Nodes: nodes, Queues: queues, Partial: true, QueueTotal: total, FromMetrics: !pageOK}
	if vhost == "" {
		for _, v := range vs {
			s.Vhosts = append(s.Vhosts, v.Name)
		}
	}
	s.TakenAt = time.Now()
	s.StatsAge = ov.StatsInterval + s.TakenAt.Sub(start)
	return s, nil
}

// deepestPage reads one page of the size deepest queues of vhost ("" for
// all) and how many queues it holds.
func (c *Client) deepestPage(ctx context.Context, vhost string, size int) ([]domain.Queue, int, error) {
	var page struct {
		TotalCount int        `json:"total_count"`
		Items      []rawQueue `json:"items"`
	}
	q := url.Values{"page": {"1"}, "page_size": {strconv.Itoa(size)},
		"sort": {"messages"}, "sort_reverse": {"true"},
		"disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	if err := c.get(ctx, inVhost("queues", vhost), q, &page); err != nil {
		return nil, 0, err
	}
	return convert(page.Items, false), page.TotalCount, nil
}

// vhostsHeld reads every vhost the user sees with the messages its
// queues hold, from the broker's per-vhost statistics: nothing is asked
// of the queues.
func (c *Client) vhostsHeld(ctx context.Context) ([]vhostHeld, error) {
	var vs present[vhostHeld]
	err := c.get(ctx, "vhosts", url.Values{"columns": {"name,messages,messages_ready,messages_unacknowledged"}}, &vs)
	return vs, err
}

// vhostHeld is a vhost and the messages its queues hold, nil when the
// broker has no statistics for it yet.
type vhostHeld struct {
	Name     string `json:"name"`
	Messages *int64 `json:"messages"`
	Ready    *int64 `json:"messages_ready"`
	Unacked  *int64 `json:"messages_unacknowledged"`
}

// heldTotals adds up the vhosts' messages: the broker-wide totals, as
// /api/overview sums the same statistics. A vhost without statistics yet
// adds nothing.
func heldTotals(vs []vhostHeld) domain.Totals {
	var t domain.Totals
	add := func(to *int64, n *int64) {
		if n != nil {
			*to += *n
		}
	}
	for _, v := range vs {
		add(&t.Messages, v.Messages)
		add(&t.Ready, v.Ready)
		add(&t.Unacked, v.Unacked)
	}
	return t
}

// deepestAcross merges the pages of the size deepest queues of each vhost
// into the size deepest of all, reading the vhosts that hold the most
// messages first and stopping at the first vhost that holds no more
// messages than the shallowest queue kept: none of its queues, nor any
// later vhost's, can be deeper. A vhost whose count is unknown may hold
// anything and is read first. The counts come from the statistics, up to
// an interval old: a vhost that filled since may be skipped, and the full
// snapshot that follows shows it. It returns the queues and how many
// queues the vhosts read hold.
func deepestAcross(ctx context.Context, vs []vhostHeld, size int,
	page func(ctx context.Context, vhost string, size int) ([]domain.Queue, int, error)) ([]domain.Queue, int, error) {
	held := func(v vhostHeld) int64 {
		if v.Messages == nil {
			return math.MaxInt64
		}
		return *v.Messages
	}
	order := slices.Clone(vs)
	sort.SliceStable(order, func(a, b int) bool { return held(order[a]) > held(order[b]) })
	var (
		kept  []domain.Queue
		total int
	)
	for _, v := range order {
		if len(kept) == size && held(v) <= kept[len(kept)-1].Messages {
			break
		}
		got, n, err := page(ctx, v.Name, size)
		if errors.Is(err, domain.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, 0, err
		}
		total += n
		kept = append(kept, got...)
		sort.SliceStable(kept, func(a, b int) bool { return kept[a].Messages > kept[b].Messages })
		kept = kept[:min(len(kept), size)]
	}
	return kept, total, nil
}
