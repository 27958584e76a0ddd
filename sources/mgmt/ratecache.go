package mgmt

import (
	"context"
	"time"

	"github.com/warrenops/warren/domain"
)

// rowStats are the figures of one queue that only its statistics view
// carries. The broker recomputes them once per statistics interval, so
// a dashboard refreshing faster would read the same figures again.
type rowStats struct {
	Consumers            int
	HeadMessageTimestamp *time.Time
	OldestUnknownReason  string
	PublishRate          float64
	AckRate              float64
	Delayed, DLXHeld     *int64
	DLXHeldBytes         *int64
	ReadyReturned        *int64
	ByPriority           map[int]int64
	DelayedRetry         string
	// Pending is set when the broker listed the queue without its
	// statistics (StatsPending): the figures above are unknown.
	Pending bool
	// at is when the request that read them was sent.
	at time.Time
}

func statsOf(q domain.Queue, at time.Time) rowStats {
	return rowStats{Consumers: q.Consumers, HeadMessageTimestamp: q.HeadMessageTimestamp,
		OldestUnknownReason: q.OldestUnknownReason, PublishRate: q.PublishRate, AckRate: q.AckRate,
		Delayed: q.Delayed, DLXHeld: q.DLXHeld, DLXHeldBytes: q.DLXHeldBytes, ReadyReturned: q.ReadyReturned,
		ByPriority: q.ByPriority, DelayedRetry: q.DelayedRetry, Pending: q.StatsPending, at: at}
}

// withStats is the cheap view of a queue with its statistics figures;
// the head timestamp's reason is worked out again against the cheap
// view's fresher depth, as withDepth does. A queue the broker listed
// without its statistics stays without rates: its consumers and rates
// are unknown, not 0.
func withStats(cheap domain.Queue, s rowStats) domain.Queue {
	if s.Pending {
		cheap.StatsPending = true
		cheap.HeadMessageTimestamp, cheap.OldestUnknownReason = s.HeadMessageTimestamp, s.OldestUnknownReason
		return cheap
	}
	cheap.HasRates = true
	cheap.Consumers, cheap.PublishRate, cheap.AckRate = s.Consumers, s.PublishRate, s.AckRate
	cheap.Delayed, cheap.DLXHeld, cheap.DLXHeldBytes = s.Delayed, s.DLXHeld, s.DLXHeldBytes
	cheap.ReadyReturned, cheap.ByPriority, cheap.DelayedRetry = s.ReadyReturned, s.ByPriority, s.DelayedRetry
	cheap.HeadMessageTimestamp, cheap.OldestUnknownReason = s.HeadMessageTimestamp, s.OldestUnknownReason
	switch {
	case cheap.Ready == 0 && cheap.Type == "classic":
		// The depth is fresher than the statistics: a head timestamp
		// read before the queue emptied names a message gone since.
		cheap.HeadMessageTimestamp, cheap.OldestUnknownReason = nil, "no ready message"
	case cheap.HeadMessageTimestamp == nil && cheap.Ready > 0 && cheap.OldestUnknownReason == "no ready message":
		cheap.OldestUnknownReason = "statistics not collected yet"
	}
	return cheap
}

// cachedStats returns the figures of refs read less than maxAge ago and
// forgets every older entry.
func (c *Client) cachedStats(refs []domain.QueueRef, now time.Time, maxAge time.Duration) map[domain.QueueRef]rowStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r, s := range c.rowStats {
		if now.Sub(s.at) >= maxAge {
			delete(c.rowStats, r)
		}
	}
	out := make(map[domain.QueueRef]rowStats, len(refs))
	for _, r := range refs {
		if s, ok := c.rowStats[r]; ok {
			out[r] = s
		}
	}
	return out
}

func (c *Client) keepStats(got map[domain.QueueRef]rowStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rowStats == nil {
		c.rowStats = make(map[domain.QueueRef]rowStats, len(got))
	}
	for r, s := range got {
		c.rowStats[r] = s
	}
}

// recentOverview is Overview for a refresh: its totals and rates change
// once per statistics interval, so within one the last answer is reused,
// and for ten times what it took when that is longer: the broker counts
// every queue to answer it, which takes it a second or two on 100 000
// queues. at is when the figures returned were asked for.
func (c *Client) recentOverview(ctx context.Context, now time.Time) (*domain.Overview, time.Time, error) {
	c.mu.Lock()
	last, at, took := c.overview, c.overviewAt, c.overviewTook
	c.mu.Unlock()
	if last != nil && now.Sub(at) < max(last.StatsInterval, 10*took) {
		ov := *last
		return &ov, at, nil
	}
	fresh, err := c.Overview(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	c.mu.Lock()
	c.overview, c.overviewAt, c.overviewTook = fresh, now, time.Since(now)
	c.mu.Unlock()
	ov := *fresh
	return &ov, now, nil
}
