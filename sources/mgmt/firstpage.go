package mgmt

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// FirstPage reads the size deepest queues (of vhost, "" for all) without
// statistics, with the overview and the nodes: a partial snapshot for a
// first screen. On a large broker it answers in a fraction of the full
// list's time, since the broker sends one page; it carries no rates or
// DLQ pairing. Partial is set and QueueTotal says how many queues there are.
func (c *Client) FirstPage(ctx context.Context, vhost string, size int) (*Snapshot, error) {
	start := time.Now()
	var (
		ov    *Overview
		nodes []Node
		page  struct {
			TotalCount int        `json:"total_count"`
			Items      []rawQueue `json:"items"`
		}
	)
	q := url.Values{"page": {"1"}, "page_size": {strconv.Itoa(max(size, 1))},
		"sort": {"messages"}, "sort_reverse": {"true"},
		"disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	err := parallel(ctx,
		func(ctx context.Context) (err error) { ov, err = c.Overview(ctx); return err },
		func(ctx context.Context) (err error) { nodes, err = c.Nodes(ctx); return err },
		func(ctx context.Context) error { return c.get(ctx, inVhost("queues", vhost), q, &page) },
	)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Overview: *ov, Nodes: nodes, Queues: convert(page.Items, false), Partial: true, QueueTotal: page.TotalCount}
	s.TakenAt = time.Now()
	s.StatsAge = ov.StatsInterval + s.TakenAt.Sub(start)
	return s, nil
}
