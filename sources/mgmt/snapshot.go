package mgmt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warrenops/warren/domain"
)

// Snapshot reads the broker as o asks. Every snapshot pairs queues with
// their DLQs; rates, head timestamps, channels and consumers are read
// only for what o names, so a refresh on 10 000 queues costs one cheap
// list plus a request per visible row (exchanges, policies and
// dead-letter bindings come from a short-lived cache).
func (c *Client) Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	start := time.Now()
	ov, ovAt, err := c.recentOverview(ctx, start)
	if err != nil {
		return nil, err
	}
	s := &domain.Snapshot{Overview: *ov}
	var (
		queues []domain.Queue
		sc     *scopeEntry
		// statsFrom is when the oldest figures of the snapshot were asked for.
		statsFrom = ovAt
	)
	jobs := []func(context.Context) error{
		func(ctx context.Context) (err error) { s.Nodes, err = c.Nodes(ctx); return err },
		func(ctx context.Context) (err error) { sc, err = c.scope(ctx, o.Vhost); return err },
		func(ctx context.Context) (err error) {
			if o.OnlyRows {
				queues, s.Gone, err = c.queuesCheap(ctx, o.RatesFor)
				if err != nil {
					return err
				}
				from, err := c.ratesFor(ctx, queues, o.RatesFor, ov.StatsInterval)
				if from.Before(statsFrom) {
					statsFrom = from
				}
				return err
			}
			if o.AllRates {
				queues, err = c.allQueuesWithStats(ctx, o.Vhost)
				return err
			}
			if queues, err = c.listQueuesCheap(ctx, o.Vhost); err != nil {
				return err
			}
			from, err := c.ratesFor(ctx, queues, o.RatesFor, ov.StatsInterval)
			if from.Before(statsFrom) {
				statsFrom = from
			}
			return err
		},
	}
	if o.WithVhosts {
		jobs = append(jobs, func(ctx context.Context) (err error) { s.Vhosts, err = c.vhostNames(ctx); return err })
	}
	if o.Channels {
		jobs = append(jobs, func(ctx context.Context) (err error) {
			s.Channels, s.Consumers, s.ChannelsNote, err = c.channelsAndConsumers(ctx, o.Vhost)
			return err
		})
	}
	if err := parallel(ctx, jobs...); err != nil {
		if errors.Is(err, domain.ErrNotFound) && o.Vhost != "" {
			// Every per-vhost collection answers 404 for an unknown vhost.
			return nil, &domain.Error{Kind: domain.ErrNotFound, Where: c.nodes.Serving().URL, Status: 404, Msg: fmt.Sprintf(
				"management API at %s: vhost %q does not exist (or user %q may not see it)", c.nodes.Serving().URL, o.Vhost, c.username)}
		}
		return nil, err
	}
	applyPolicies(queues, sc)
	if o.OnlyRows {
		s.Queues, s.OnlyRows = queues, true
		return c.taken(s, start, statsFrom, ov), nil
	}
	topo, err := c.deadLetterTopology(ctx, sc, queues)
	if err != nil {
		return nil, err
	}
	domain.SortQueues(queues)
	pairDLQs(queues, &topo, append(append([]domain.DLQOverride(nil), o.DLQOverrides...), c.pins...), c.Learned()...)
	markParking(queues, c.parking)
	s.Queues, s.Topology = queues, topo
	return c.taken(s, start, statsFrom, ov), nil
}

// taken stamps a snapshot begun at start. The API's figures were at most
// one collection interval old when it answered; StatsAge is that bound
// as of TakenAt, counted from the oldest request whose figures a row
// reuses (statsFrom).
func (c *Client) taken(s *domain.Snapshot, start, statsFrom time.Time, ov *domain.Overview) *domain.Snapshot {
	withoutRates(s.Queues, ov.RatesMode)
	s.TakenAt = time.Now()
	c.mu.Lock()
	c.lastSnapshot = s.TakenAt.Sub(start)
	c.mu.Unlock()
	s.StatsAge = ov.StatsInterval + s.TakenAt.Sub(statsFrom)
	return s
}

// pairDLQs sets each queue's DLQ (config override first, then where its
// dead-letter exchange routes), DLQOf and DLQMessages.
func pairDLQs(queues []domain.Queue, t *domain.Topology, overrides []domain.DLQOverride, learned ...domain.DLQOverride) {
	if !t.Indexed() {
		t.IndexDirect()
	}
	index := make(map[domain.QueueRef]int, len(queues))
	for i := range queues {
		index[queues[i].Ref()] = i
		queues[i].DLQ, queues[i].DLQOf, queues[i].DLQMessages, queues[i].RetryTarget = nil, nil, 0, nil
		queues[i].DLQSource, queues[i].PairedBy, queues[i].ErrorQueue = "", "", false
	}
	exists := func(r domain.QueueRef) bool { _, ok := index[r]; return ok }
	// Where each queue's dead letters go by the broker's own routing,
	// before config pins: a retry loop is a topology fact.
	routes := make([][]domain.QueueRef, len(queues))
	for i := range queues {
		r, ok := t.DeadLetterRoute(queues[i], exists)
		if !ok || r.Missing {
			continue
		}
		for _, ref := range r.Targets {
			if exists(ref) {
				routes[i] = append(routes[i], ref)
			}
		}
	}
	for i := range queues {
		q := &queues[i]
		if name, ok := overrideFor(*q, overrides); ok {
			q.DLQ, q.DLQSource = &domain.QueueRef{Vhost: q.Vhost, Name: name}, domain.PairedByConfig
			continue
		}
		var targets []domain.QueueRef
		for _, ref := range routes[i] {
			if isRetryReturn(*q, ref, routes[index[ref]]) {
				back := ref
				q.RetryTarget = &back
				continue
			}
			targets = append(targets, ref)
		}
		if q.DLQ = pickDLQ(*q, targets); q.DLQ != nil {
			q.DLQSource = domain.PairedByDLX
		}
	}
	pairErrorQueues(queues, index, learned)
	for i := range queues {
		q := &queues[i]
		if q.DLQ == nil {
			continue
		}
		if j, ok := index[*q.DLQ]; ok {
			queues[j].DLQOf = append(queues[j].DLQOf, q.Ref())
			if queues[j].PairedBy == "" {
				queues[j].PairedBy = q.DLQSource
			}
			q.DLQMessages = queues[j].Messages
		}
	}
	for i := range queues {
		// orders_skipped serves orders as orders_error does, though
		// orders has one DLQ.
		q := &queues[i]
		if base, ok := ErrorQueueOf(q.Name); ok && q.ErrorQueue && len(q.DLQOf) == 0 {
			if _, ok := index[domain.QueueRef{Vhost: q.Vhost, Name: base}]; ok {
				q.DLQOf, q.PairedBy = []domain.QueueRef{{Vhost: q.Vhost, Name: base}}, domain.PairedByNaming
			}
		}
	}
}

// isRetryReturn reports whether q is the waiting half of a retry loop
// (work ⇄ wait): q holds messages for a TTL and dead-letters them back to
// target, which dead-letters into q. Such a target is where retries go,
// not q's DLQ.
func isRetryReturn(q domain.Queue, target domain.QueueRef, targetRoutes []domain.QueueRef) bool {
	if _, ttl := q.LimitSetting("message-ttl"); !ttl {
		return false
	}
	for _, r := range targetRoutes {
		if r == q.Ref() {
			return true
		}
	}
	return false
}

func overrideFor(q domain.Queue, overrides []domain.DLQOverride) (string, bool) {
	for _, o := range overrides {
		if o.Queue == q.Name && (o.Vhost == "" || o.Vhost == q.Vhost) && o.DLQ != "" {
			return o.DLQ, true
		}
	}
	return "", false
}

// channelsAndConsumers reads channels and consumers. A 3.10 broker with
// statistics disabled answers 400 to /api/channels and /api/consumers:
// that becomes a note, not a failure.
func (c *Client) channelsAndConsumers(ctx context.Context, vhost string) ([]domain.Channel, []domain.Consumer, string, error) {
	var (
		rawCh []rawChannel
		rawCo []rawConsumer
		note  string
	)
	chPath := "channels"
	if vhost != "" {
		chPath = "vhosts/" + esc(vhost) + "/channels"
	}
	err := parallel(ctx,
		func(ctx context.Context) error {
			err := c.get(ctx, chPath, nil, &rawCh)
			if n, ok := channelsUnavailable(err); ok {
				note = n
				return nil
			}
			return err
		},
		func(ctx context.Context) error {
			err := c.get(ctx, inVhost("consumers", vhost), nil, &rawCo)
			if _, ok := channelsUnavailable(err); ok {
				return nil
			}
			return err
		},
	)
	if err != nil {
		return nil, nil, "", err
	}
	chans := make([]domain.Channel, 0, len(rawCh))
	for _, r := range rawCh {
		chans = append(chans, r.channel())
	}
	cons := make([]domain.Consumer, 0, len(rawCo))
	for _, r := range rawCo {
		cons = append(cons, r.consumer(domain.QueueRef{}))
	}
	return chans, cons, note, nil
}

// channelsUnavailable turns the 400 that /api/channels gives when the
// broker collects no statistics into a note for the screen.
func channelsUnavailable(err error) (string, bool) {
	var e *domain.Error
	if !errors.As(err, &e) || e.Status != 400 {
		return "", false
	}
	return fmt.Sprintf("channel details unavailable: the broker collects no channel statistics (%s); prefetch and unconfirmed counts are unknown", e.Reason), true
}

// withoutRates marks the queues' rates unknown when the broker collects
// none (rates_mode = none): it then lists no rate details, which would
// read as rates of 0, and every busy queue would look stalled.
func withoutRates(qs []domain.Queue, ratesMode string) {
	if ratesMode != "none" {
		return
	}
	for i := range qs {
		qs[i].HasRates, qs[i].PublishRate, qs[i].AckRate = false, 0, 0
	}
}

// markParking sets Parking on the queues config names as parking queues
// (an empty Vhost matches any) and on each DLQ's default parking queue.
// It runs after pairDLQs, which tells which queues are DLQs.
func markParking(queues []domain.Queue, pins []domain.QueueRef) {
	dlqs := make(map[domain.QueueRef]bool)
	for _, q := range queues {
		if q.IsDLQ() {
			dlqs[q.Ref()] = true
		}
	}
	for i := range queues {
		q := &queues[i]
		q.Parking = false
		for _, p := range pins {
			if p.Name == q.Name && (p.Vhost == "" || p.Vhost == q.Vhost) {
				q.Parking = true
			}
		}
		if base, ok := strings.CutSuffix(q.Name, domain.ParkingSuffix); ok && dlqs[domain.QueueRef{Vhost: q.Vhost, Name: base}] {
			q.Parking = true
		}
	}
}
