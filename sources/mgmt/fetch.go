package mgmt

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/warrenops/warren/domain"
)

// statsColumns are the queue fields read when rates are wanted. Asking
// for columns also makes a 3.13+ broker compute the detailed figures.
const statsColumns = "name,vhost,type,durable,exclusive,state,arguments,policy,effective_policy_definition," +
	"node,leader,members,online,messages,messages_ready,messages_unacknowledged,consumers," +
	"head_message_timestamp,message_stats,messages_delayed,messages_dlx,message_bytes_dlx," +
	"messages_ready_returned,messages_by_priority,delayed_retry"

func inVhost(collection, vhost string) string {
	if vhost == "" {
		return collection
	}
	return collection + "/" + esc(vhost)
}

// Overview reads /api/overview: version, totals and broker-wide rates.
func (c *Client) Overview(ctx context.Context) (*domain.Overview, error) {
	return c.readOverview(ctx, nil)
}

// countsOverview reads /api/overview without statistics: the versions and
// the object counts the broker keeps counted (queues, exchanges,
// connections), no message totals, rates, channel or consumer counts. The
// full overview counts every queue record to answer (1-2 s on a broker
// of 100 000 queues); this one answers in milliseconds for an
// administrator or monitor.
func (c *Client) countsOverview(ctx context.Context) (*domain.Overview, error) {
	ov, err := c.readOverview(ctx, url.Values{"disable_stats": {"true"}})
	if err != nil {
		return nil, err
	}
	ov.RatesUnknown = true
	return ov, nil
}

func (c *Client) readOverview(ctx context.Context, q url.Values) (*domain.Overview, error) {
	var r struct {
		ClusterName       string       `json:"cluster_name"`
		RabbitMQVersion   string       `json:"rabbitmq_version"`
		ProductVersion    string       `json:"product_version"`
		ManagementVersion string       `json:"management_version"`
		ErlangVersion     string       `json:"erlang_version"`
		RatesMode         string       `json:"rates_mode"`
		Node              string       `json:"node"`
		MessageStats      *rawMsgStats `json:"message_stats"`
		QueueTotals       struct {
			Messages int64 `json:"messages"`
			Ready    int64 `json:"messages_ready"`
			Unacked  int64 `json:"messages_unacknowledged"`
		} `json:"queue_totals"`
		ObjectTotals struct {
			Queues      int `json:"queues"`
			Consumers   int `json:"consumers"`
			Connections int `json:"connections"`
			Channels    int `json:"channels"`
			Exchanges   int `json:"exchanges"`
		} `json:"object_totals"`
	}
	if err := c.get(ctx, "overview", q, &r); err != nil {
		return nil, err
	}
	v := r.RabbitMQVersion
	if v == "" {
		v = r.ProductVersion
	}
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
	var via, first, missed string
	var missedAt time.Time
	if sv := c.nodes.Serving(); sv.Fallback {
		via, first, missedAt = sv.URL, c.where, sv.MissedAt
		if sv.Missed != nil {
			missed = sv.Missed.Error()
		}
	}
	return &domain.Overview{
		Via: via, First: first, Missed: missed, MissedAt: missedAt,
		ClusterName: r.ClusterName, RabbitMQVersion: v, ManagementVersion: r.ManagementVersion,
		ErlangVersion: r.ErlangVersion, StatsInterval: domain.DefaultStatsInterval, RatesMode: r.RatesMode,
		Totals:      domain.Totals{Messages: r.QueueTotals.Messages, Ready: r.QueueTotals.Ready, Unacked: r.QueueTotals.Unacked},
		PublishRate: r.MessageStats.publishRate(), AckRate: r.MessageStats.drainRate(),
		Node: r.Node, QueueCount: r.ObjectTotals.Queues, ConsumerCount: r.ObjectTotals.Consumers,
		ConnectionCount: r.ObjectTotals.Connections, ChannelCount: r.ObjectTotals.Channels,
		ExchangeCount: r.ObjectTotals.Exchanges,
	}, nil
}

// Nodes reads /api/nodes: the cluster members and their alarms.
func (c *Client) Nodes(ctx context.Context) ([]domain.Node, error) {
	var raw []rawNode
	q := url.Values{"columns": {"name,running,mem_used,mem_limit,mem_alarm,disk_free,disk_free_limit,disk_free_alarm,partitions"}}
	if err := c.get(ctx, "nodes", q, &raw); err != nil {
		return nil, err
	}
	out := make([]domain.Node, 0, len(raw))
	for _, n := range raw {
		out = append(out, domain.Node{Name: n.Name, Running: n.Running,
			MemUsed: int64(n.MemUsed), MemLimit: int64(n.MemLimit), MemAlarm: n.MemAlarm,
			DiskFree: int64(n.DiskFree), DiskLimit: int64(n.DiskFreeLimit), DiskAlarm: n.DiskFreeAlarm,
			Partitions: n.Partitions})
	}
	return out, nil
}

// rawNode is a node as /api/nodes lists it. Its sizes are read leniently:
// a node whose disk monitor never started reports disk_free as "NaN",
// and one node's odd figure must not blank the whole dashboard.
type rawNode struct {
	Name          string      `json:"name"`
	Running       bool        `json:"running"`
	MemUsed       lenientSize `json:"mem_used"`
	MemLimit      lenientSize `json:"mem_limit"`
	MemAlarm      bool        `json:"mem_alarm"`
	DiskFree      lenientSize `json:"disk_free"`
	DiskFreeLimit lenientSize `json:"disk_free_limit"`
	DiskFreeAlarm bool        `json:"disk_free_alarm"`
	Partitions    []string    `json:"partitions"`
}

// lenientSize is a byte count, 0 when the broker gives something else.
type lenientSize int64

func (n *lenientSize) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) != nil {
		*n = 0
		return nil
	}
	*n = lenientSize(f)
	return nil
}

// cheapColumns are the fields of the cheap list: what a queue's row,
// its DLQ pairing and its policy need. A 4.x broker builds and encodes
// less for fewer columns (10 000 queues: about 1.0 s instead of 1.3-2.5 s
// on the same broker).
const cheapColumns = "name,vhost,type,durable,exclusive,state,arguments,policy,effective_policy_definition," +
	"node,leader,members,messages,messages_ready,messages_unacknowledged"

// listQueuesCheap reads every queue's depth, arguments and policy name
// without statistics: the 0.8 s call where the full list takes 4 s on
// 10 000 queues. Every vhost ("") is read one vhost at a time: on a
// broker of 100 000 queues in ten vhosts the lists of each add up to
// about two thirds of the one list of all, which also runs into the
// broker's request timeout sooner. One at a time, since each keeps a
// broker core busy and two at once took twice as long each on two cores.
func (c *Client) listQueuesCheap(ctx context.Context, vhost string) ([]domain.Queue, error) {
	q := url.Values{"disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	if c.slimColumns() {
		q.Set("columns", cheapColumns)
	}
	if vhost != "" {
		return c.listQueues(ctx, inVhost("queues", vhost), q, false)
	}
	names, err := c.vhostNames(ctx)
	if err != nil || len(names) < 2 {
		// One vhost or none: the list of all is the same request.
		return c.listQueues(ctx, "queues", q, false)
	}
	// Each vhost's list joins the whole as soon as it is read, so no
	// more than one is held besides it; the whole is sized for the last
	// count of queues, so it is not copied as it grows.
	var mu sync.Mutex
	out := make([]domain.Queue, 0, c.queueCountHint())
	err = forEach(ctx, len(names), vhostParallel, func(ctx context.Context, i int) error {
		l, err := c.listQueues(ctx, inVhost("queues", names[i]), q, false)
		if errors.Is(err, domain.ErrNotFound) {
			// Deleted since it was listed: it has no queues now.
			return nil
		}
		mu.Lock()
		out = append(out, l...)
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queueCountHint is how many queues the broker had when last counted (the
// overview's count), with a little room.
func (c *Client) queueCountHint() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.overview == nil {
		return 0
	}
	return c.overview.QueueCount + c.overview.QueueCount/64
}

// queuesCheap reads the queues refs name one by one, as the cheap list
// gives them (depth read from the queues, settings, no statistics), in
// the order of refs, each once. A queue the broker answers 404 for was
// deleted: it is left out and named in gone.
//
// Before 4.0 the answer for one queue without statistics carries no depth
// (3.10 ignores enable_queue_totals there), so each is read with its
// statistics, which are kept for ratesFor as a list's rows' are.
func (c *Client) queuesCheap(ctx context.Context, refs []domain.QueueRef) (queues []domain.Queue, gone []domain.QueueRef, err error) {
	refs = uniqueRefs(refs)
	cheap := c.slimColumns()
	columns, extra := cheapColumns, url.Values{"disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	if !cheap {
		columns, extra = statsColumns, nil
	}
	now := time.Now()
	got := make([]*rawQueue, len(refs))
	err = forEach(ctx, len(refs), rowParallel, func(ctx context.Context, i int) error {
		r, err := c.queueStats(ctx, refs[i], columns, extra)
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		got[i] = r
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	queues = make([]domain.Queue, 0, len(refs))
	fresh := map[domain.QueueRef]rowStats{}
	for i, r := range got {
		if r == nil {
			gone = append(gone, refs[i])
			continue
		}
		if r.Vhost == "" {
			r.Vhost = refs[i].Vhost
		}
		queue := r.queue(!cheap)
		if s := statsOf(queue, now); !cheap && !s.Pending {
			fresh[refs[i]] = s
		}
		queues = append(queues, queue)
	}
	c.keepStats(fresh)
	return queues, gone, nil
}

func uniqueRefs(refs []domain.QueueRef) []domain.QueueRef {
	seen := make(map[domain.QueueRef]bool, len(refs))
	out := make([]domain.QueueRef, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// slimColumns reports whether the broker is known to be 4.0 or later,
// where asking for columns makes the cheap list cheaper; on 3.x it does
// not (measured on 3.10), so the list is asked for whole there.
func (c *Client) slimColumns() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return domain.AtLeast(c.version, 4, 0)
}

// vhostParallel is how many vhosts' lists are read at once.
const vhostParallel = 1

// vhostNames lists the vhosts the user can see, sorted.
func (c *Client) vhostNames(ctx context.Context) ([]string, error) {
	var vs present[struct {
		Name string `json:"name"`
	}]
	if err := c.get(ctx, "vhosts", url.Values{"columns": {"name"}}, &vs); err != nil {
		return nil, err
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	sort.Strings(names)
	return names, nil
}

// listQueues reads a list of queues at path, decoding it as it streams in.
func (c *Client) listQueues(ctx context.Context, path string, q url.Values, withStats bool) ([]domain.Queue, error) {
	var out []domain.Queue
	err := c.read(ctx, path, q, func(r io.Reader) (err error) {
		out, err = decodeQueues(r, withStats)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listQueuesStats reads every queue with rates and head timestamps, from
// /api/queues/detailed on 3.13+ (where /api/queues is slimmed), else
// /api/queues with the columns named, which makes the broker compute
// the same figures. The detailed endpoint sits behind a feature flag and
// has no per-vhost form on every version (4.3 answers
// /api/queues/detailed/VHOST with 404 and serves /api/queues/detailed),
// so a 404 disables only the form that gave it.
func (c *Client) listQueuesStats(ctx context.Context, vhost string) ([]domain.Queue, error) {
	q := url.Values{"columns": {statsColumns}}
	form := 0
	if vhost != "" {
		form = 1
	}
	c.mu.Lock()
	detailed := domain.AtLeast(c.version, 3, 13) && !c.detailedMissing[form]
	c.mu.Unlock()
	if detailed {
		queues, err := c.listQueues(ctx, inVhost("queues/detailed", vhost), q, true)
		if err == nil {
			return c.settlePending(ctx, vhost, queues)
		}
		if !errors.Is(err, domain.ErrNotFound) {
			return nil, err
		}
		c.mu.Lock()
		c.detailedMissing[form] = true
		c.mu.Unlock()
	}
	queues, err := c.listQueues(ctx, inVhost("queues", vhost), q, true)
	if err != nil {
		return nil, err
	}
	return c.settlePending(ctx, vhost, queues)
}

// settlePending gives the rows the broker listed without their
// statistics (StatsPending: a queue seconds old) the policy the cheap
// list names, so what the queue is configured to do is known even while
// its figures are not.
func (c *Client) settlePending(ctx context.Context, vhost string, queues []domain.Queue) ([]domain.Queue, error) {
	pending := 0
	for _, q := range queues {
		if q.StatsPending {
			pending++
		}
	}
	if pending == 0 {
		return queues, nil
	}
	cheap, err := c.listQueuesCheap(ctx, vhost)
	if err != nil {
		return nil, err
	}
	byRef := make(map[domain.QueueRef]*domain.Queue, len(cheap))
	for i := range cheap {
		byRef[cheap[i].Ref()] = &cheap[i]
	}
	for i := range queues {
		q := &queues[i]
		if p := byRef[q.Ref()]; q.StatsPending && p != nil {
			q.Policy = p.Policy
			if len(q.EffectiveDefinition) == 0 {
				q.EffectiveDefinition = p.EffectiveDefinition
			}
		}
	}
	return queues, nil
}

func convert(raw []rawQueue, withStats bool) []domain.Queue {
	out := make([]domain.Queue, len(raw))
	for i := range raw {
		out[i] = raw[i].queue(withStats)
	}
	return out
}

// queueStats reads one queue with its statistics; extra adds parameters
// (sample ranges for the queue screen, or disable_stats for its cheap
// form).
func (c *Client) queueStats(ctx context.Context, ref domain.QueueRef, columns string, extra url.Values) (*rawQueue, error) {
	q := url.Values{}
	if columns != "" {
		q.Set("columns", columns)
	}
	for k, v := range extra {
		q[k] = v
	}
	var r rawQueue
	if err := c.get(ctx, "queues/"+esc(ref.Vhost)+"/"+esc(ref.Name), q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ratesFor merges rates and head timestamps for refs into queues. The
// figures of a row read less than reuse ago are used again, since the
// broker recomputes them once per statistics interval; the others are
// requested, in parallel. A queue deleted meanwhile is skipped. It
// returns when the oldest figures used were requested (now if none).
func (c *Client) ratesFor(ctx context.Context, queues []domain.Queue, refs []domain.QueueRef, reuse time.Duration) (time.Time, error) {
	now := time.Now()
	index := make(map[domain.QueueRef]int, len(queues))
	for i, q := range queues {
		index[q.Ref()] = i
	}
	cached := c.cachedStats(refs, now, reuse)
	oldest := now
	var want []domain.QueueRef
	seen := map[domain.QueueRef]bool{}
	for _, r := range refs {
		j, ok := index[r]
		if !ok || seen[r] {
			continue
		}
		seen[r] = true
		if s, ok := cached[r]; ok {
			queues[j] = withStats(queues[j], s)
			if s.at.Before(oldest) {
				oldest = s.at
			}
			continue
		}
		want = append(want, r)
	}
	got := make([]*rawQueue, len(want))
	err := forEach(ctx, len(want), rowParallel, func(ctx context.Context, i int) error {
		r, err := c.queueStats(ctx, want[i], statsColumns, nil)
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		got[i] = r
		return err
	})
	if err != nil {
		return now, err
	}
	fresh := make(map[domain.QueueRef]rowStats, len(want))
	for i, r := range got {
		if r == nil {
			continue
		}
		if r.Vhost == "" {
			r.Vhost = want[i].Vhost
		}
		s := statsOf(r.queue(true), now)
		if !s.Pending {
			// A queue listed without its statistics is asked again
			// at the next refresh: the broker emits them within an
			// interval.
			fresh[want[i]] = s
		}
		j := index[want[i]]
		queues[j] = withStats(queues[j], s)
	}
	c.keepStats(fresh)
	return oldest, nil
}

// allQueuesWithStats reads the statistics list and the cheap list
// together: rates come from the first, depths from the second, which is
// read from the queues themselves while the statistics lag by up to an
// interval (a queue declared a moment ago has no figures there yet).
func (c *Client) allQueuesWithStats(ctx context.Context, vhost string) ([]domain.Queue, error) {
	var cheap, stats []domain.Queue
	err := parallel(ctx,
		func(ctx context.Context) (err error) { cheap, err = c.listQueuesCheap(ctx, vhost); return err },
		func(ctx context.Context) (err error) { stats, err = c.listQueuesStats(ctx, vhost); return err },
	)
	if err != nil {
		return nil, err
	}
	byRef := make(map[domain.QueueRef]domain.Queue, len(stats))
	for _, q := range stats {
		byRef[q.Ref()] = q
	}
	for i, q := range cheap {
		if s, ok := byRef[q.Ref()]; ok {
			cheap[i] = withDepth(s, q)
		}
	}
	return cheap, nil
}

// withDepth is the statistics view of a queue with the depth and state
// of its cheap view. The head timestamp's reason is worked out again
// against the fresher depth.
func withDepth(stats, cheap domain.Queue) domain.Queue {
	stats.Messages, stats.Ready, stats.Unacked = cheap.Messages, cheap.Ready, cheap.Unacked
	if cheap.State != "" {
		stats.State = cheap.State
	}
	switch {
	case stats.Ready == 0 && stats.Type == "classic":
		// As in withStats: a head timestamp read before the queue
		// emptied names a message gone since.
		stats.HeadMessageTimestamp, stats.OldestUnknownReason = nil, "no ready message"
	case stats.HeadMessageTimestamp == nil && stats.Ready > 0 && stats.OldestUnknownReason == "no ready message":
		stats.OldestUnknownReason = "statistics not collected yet"
	}
	return stats
}
