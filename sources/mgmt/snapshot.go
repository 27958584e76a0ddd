package mgmt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Snapshot reads the broker as o asks. Every snapshot pairs queues with
// their DLQs; rates, head timestamps, channels and consumers are read
// only for what o names, so a refresh on 10 000 queues costs one cheap
// list plus a request per visible row (exchanges, policies and
// dead-letter bindings come from a short-lived cache).
func (c *Client) Snapshot(ctx context.Context, o SnapshotOptions) (*Snapshot, error) {
	start := time.Now()
	ov, ovAt, err := c.recentOverview(ctx, start)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Overview: *ov}
	var (
		queues []Queue
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
		if errors.Is(err, ErrNotFound) && o.Vhost != "" {
			// Every per-vhost collection answers 404 for an unknown vhost.
			return nil, &Error{Kind: ErrNotFound, Where: c.where, Status: 404, Msg: fmt.Sprintf(
				"management API at %s: vhost %q does not exist (or user %q may not see it)", c.where, o.Vhost, c.username)}
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
	SortQueues(queues)
	pairDLQs(queues, &topo, append(append([]DLQOverride(nil), o.DLQOverrides...), c.pins...), c.Learned()...)
	markParking(queues, c.parking)
	s.Queues, s.Topology = queues, topo
	return c.taken(s, start, statsFrom, ov), nil
}

// taken stamps a snapshot begun at start. The API's figures were at most
// one collection interval old when it answered; StatsAge is that bound
// as of TakenAt, counted from the oldest request whose figures a row
// reuses (statsFrom).
func (c *Client) taken(s *Snapshot, start, statsFrom time.Time, ov *Overview) *Snapshot {
	withoutRates(s.Queues, ov.RatesMode)
	s.TakenAt = time.Now()
	c.mu.Lock()
	c.lastSnapshot = s.TakenAt.Sub(start)
	c.mu.Unlock()
	s.StatsAge = ov.StatsInterval + s.TakenAt.Sub(statsFrom)
	return s
}

// Sources are the queues whose dead letters end up in ref: the queues
// that dead-letter into it, or, for a DLQ's default parking queue, into
// that DLQ.
func (s *Snapshot) Sources(ref QueueRef) []QueueRef {
	q := s.Queue(ref)
	if q == nil {
		return nil
	}
	if base, ok := strings.CutSuffix(q.Name, ParkingSuffix); ok && q.Parking && !q.IsDLQ() {
		if d := s.Queue(QueueRef{Vhost: q.Vhost, Name: base}); d != nil {
			return d.DLQOf
		}
	}
	return q.DLQOf
}

// Queue returns the snapshot's queue, or nil.
func (s *Snapshot) Queue(ref QueueRef) *Queue {
	for i := range s.Queues {
		if s.Queues[i].Ref() == ref {
			return &s.Queues[i]
		}
	}
	return nil
}

// pairDLQs sets each queue's DLQ (config override first, then where its
// dead-letter exchange routes), DLQOf and DLQMessages.
func pairDLQs(queues []Queue, t *Topology, overrides []DLQOverride, learned ...DLQOverride) {
	if t.direct == nil {
		t.indexDirect()
	}
	index := make(map[QueueRef]int, len(queues))
	for i := range queues {
		index[queues[i].Ref()] = i
		queues[i].DLQ, queues[i].DLQOf, queues[i].DLQMessages, queues[i].RetryTarget = nil, nil, 0, nil
		queues[i].DLQSource, queues[i].PairedBy, queues[i].ErrorQueue = "", "", false
	}
	exists := func(r QueueRef) bool { _, ok := index[r]; return ok }
	// Where each queue's dead letters go by the broker's own routing,
	// before config pins: a retry loop is a topology fact.
	routes := make([][]QueueRef, len(queues))
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
			q.DLQ, q.DLQSource = &QueueRef{Vhost: q.Vhost, Name: name}, PairedByConfig
			continue
		}
		var targets []QueueRef
		for _, ref := range routes[i] {
			if isRetryReturn(*q, ref, routes[index[ref]]) {
				back := ref
				q.RetryTarget = &back
				continue
			}
			targets = append(targets, ref)
		}
		if q.DLQ = pickDLQ(*q, targets); q.DLQ != nil {
			q.DLQSource = PairedByDLX
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
			if _, ok := index[QueueRef{Vhost: q.Vhost, Name: base}]; ok {
				q.DLQOf, q.PairedBy = []QueueRef{{Vhost: q.Vhost, Name: base}}, PairedByNaming
			}
		}
	}
}

// isRetryReturn reports whether q is the waiting half of a retry loop
// (work ⇄ wait): q holds messages for a TTL and dead-letters them back to
// target, which dead-letters into q. Such a target is where retries go,
// not q's DLQ.
func isRetryReturn(q Queue, target QueueRef, targetRoutes []QueueRef) bool {
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

func overrideFor(q Queue, overrides []DLQOverride) (string, bool) {
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
func (c *Client) channelsAndConsumers(ctx context.Context, vhost string) ([]Channel, []Consumer, string, error) {
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
	chans := make([]Channel, 0, len(rawCh))
	for _, r := range rawCh {
		chans = append(chans, r.channel())
	}
	cons := make([]Consumer, 0, len(rawCo))
	for _, r := range rawCo {
		cons = append(cons, r.consumer(QueueRef{}))
	}
	return chans, cons, note, nil
}

// channelsUnavailable turns the 400 that /api/channels gives when the
// broker collects no statistics into a note for the screen.
func channelsUnavailable(err error) (string, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 {
		return "", false
	}
	return fmt.Sprintf("channel details unavailable: the broker collects no channel statistics (%s); prefetch and unconfirmed counts are unknown", e.Reason), true
}

// withoutRates marks the queues' rates unknown when the broker collects
// none (rates_mode = none): it then lists no rate details, which would
// read as rates of 0, and every busy queue would look stalled.
func withoutRates(qs []Queue, ratesMode string) {
	if ratesMode != "none" {
		return
	}
	for i := range qs {
		qs[i].HasRates, qs[i].PublishRate, qs[i].AckRate = false, 0, 0
	}
}
