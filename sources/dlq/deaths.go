package dlq

import (
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// markers reports whether h carries warren's own marks, which change how
// warren treats a message (left out of bulk replays, counted as a loop,
// its attempts and age), and the operation they name.
func markers(h amqp.Table) (marked bool, operation string) {
	for _, k := range []string{domain.HeaderQuarantineReason, domain.HeaderReplayCount, domain.HeaderReplayAttempts, domain.HeaderReplayDeaths, domain.HeaderReplayedAt} {
		marked = marked || h[k] != nil
	}
	operation, _ = domain.ValueText(h[domain.HeaderOperation])
	return marked, operation
}

// believed reports whether warren's marks on h are its own: they name an
// operation the audit log knows (docs/ARCHITECTURE.md §7). Any publisher
// can write x-warren-* headers; without KnownOperation all are believed.
func (o Options) believed(h amqp.Table) bool {
	marked, op := markers(h)
	return !marked || o.KnownOperation == nil || (op != "" && o.KnownOperation(op))
}

// ParseDeaths reads the x-death header (domain.ParseDeaths).
func ParseDeaths(h amqp.Table) []domain.Death { return domain.ParseDeaths(h) }

// origin is where a dead letter last died: the queue, the reason, the
// exchange and routing keys it had there.
type origin struct {
	Queue, Reason, Exchange string
	RoutingKeys             []string
}

// findOrigin picks the most recent death: the head of x-death when it can
// be read, else x-last-death-* (3.13+), else x-first-death-* (3.10–3.12).
// x-death comes first because the broker writes it on every
// dead-lettering, while before 3.13 x-last-death-* can only have come
// from a producer: trusting those first would let a producer pick the
// queue an operator's replay publishes to.
func findOrigin(deaths []domain.Death, h amqp.Table) origin {
	if len(deaths) > 0 {
		d := deaths[0]
		return origin{Queue: d.Queue, Reason: d.Reason, Exchange: d.Exchange, RoutingKeys: d.RoutingKeys}
	}
	var o origin
	if q, ok := domain.ValueText(h[domain.HeaderLastDeathQueue]); ok {
		o.Queue = q
		o.Reason, _ = domain.ValueText(h[domain.HeaderLastDeathReason])
		o.Exchange, _ = domain.ValueText(h[domain.HeaderLastDeathExchange])
		return o
	}
	o.Queue, _ = domain.ValueText(h[domain.HeaderFirstDeathQueue])
	o.Reason, _ = domain.ValueText(h[domain.HeaderFirstDeathReason])
	o.Exchange, _ = domain.ValueText(h[domain.HeaderFirstDeathExchange])
	return o
}

// diedAt is when the letter was last dead-lettered, at the earliest:
// latestDeath, or for a copy warren replayed whose marks are believed,
// its replay when that is later — a broker before 4.0 keeps the first
// time per queue and reason in the x-death the copy carried, so a copy
// that died again would look as old as its first death.
func diedAt(deaths []domain.Death, h amqp.Table, believed bool) time.Time {
	at := latestDeath(deaths)
	if !believed || len(deaths) == 0 {
		return at
	}
	if s, ok := h[domain.HeaderReplayedAt].(string); ok {
		if r, err := time.Parse(time.RFC3339Nano, s); err == nil && r.After(at) {
			return r
		}
	}
	return at
}

// latestDeath is the latest time any x-death entry records. The broker
// keeps only the first time per queue and reason, so this is the best
// lower bound on when the message was last dead-lettered.
func latestDeath(deaths []domain.Death) time.Time {
	var t time.Time
	for _, d := range deaths {
		if d.Time.After(t) {
			t = d.Time
		}
	}
	return t
}

// Attempts is docs/ARCHITECTURE.md §2's attempt count of a letter whose
// warren marks are believed, with attemptsHeader the application's own
// counter, on a broker from 4.0 (Options.CarriesDeaths false): what its
// headers count, and for a copy warren replayed, the failures before.
func Attempts(deaths []domain.Death, origin string, h amqp.Table, attemptsHeader string) int {
	return Options{AttemptsHeader: attemptsHeader}.attempts(deaths, origin, h, true)
}

// attempts is a letter's attempt count with o's knowledge: the larger of
// what its counters say (x-delivery-count, the application's attempts
// header) and what x-death counts at the origin, the latter raised by the
// failures before warren's replays when its marks are believed (a replay
// count no known operation wrote counts none).
func (o Options) attempts(deaths []domain.Death, origin string, h amqp.Table, believed bool) int {
	died := diedAtOrigin(deaths, origin, o)
	if believed {
		died = o.withReplays(died, deaths, h)
		if n, ok := domain.ValueInt(h[domain.HeaderQuarantineAttempts]); ok {
			// A parked copy: its count when quarantined, which the
			// parking queue's reading cannot weigh (no origin limit).
			died = max(died, n)
		}
	}
	return clampInt(max(died, counters(h, o)))
}

// diedAtOrigin is the x-death counts summed for the origin queue, a
// delivery_limit death at a quorum origin of known limit standing for
// limit + 1 deliveries, which the count alone does not show.
func diedAtOrigin(deaths []domain.Death, origin string, o Options) int64 {
	limit, weighed := o.OriginDeliveryLimits[origin]
	weighed = weighed && limit >= 0
	var n int64
	for _, d := range deaths {
		switch {
		case d.Queue != origin:
		case weighed && d.Reason == domain.ReasonDeliveryLimit:
			n = addSat(n, addSat(mulSat(d.Count, limit), d.Count))
		default:
			n = addSat(n, d.Count)
		}
	}
	return n
}

// counters is the largest of the letter's own counters: x-delivery-count
// and the application's attempts header. A copy keeps them as they were,
// so they are never added to a replay's record.
func counters(h amqp.Table, o Options) int64 {
	var best int64
	if n, ok := domain.ValueInt(h[domain.HeaderDeliveryCount]); ok && n > best {
		best = n
	}
	if o.AttemptsHeader != "" {
		if n, ok := domain.ValueInt(h[o.AttemptsHeader]); ok && n > best {
			best = n
		}
	}
	return best
}

// withReplays adds to died, what x-death counts at the origin, the
// failures before warren last replayed the letter. A copy carries the
// attempt count it was replayed with (x-warren-attempts) and, per queue,
// the sum of the x-death counts it carried then (x-warren-deaths). A
// broker that goes on counting on the x-death a publisher sets
// (Options.CarriesDeaths) counts the carried deaths again: only the
// origin's counts beyond those carried are new failures — a retry queue's
// expiries between them are not attempts — a delivery_limit death among
// them standing for its limit + 1 as diedAtOrigin counts. A broker that
// starts x-death afresh counts only new ones. A copy without that record
// (replayed before warren wrote it) counts one failure per replay where
// the broker starts afresh, none where it goes on counting.
func (o Options) withReplays(died int64, deaths []domain.Death, h amqp.Table) int64 {
	before, ok := domain.ValueInt(h[domain.HeaderReplayAttempts])
	switch {
	case (!ok || before < 0) && o.CarriesDeaths:
		return died
	case !ok || before < 0:
		return addSat(died, int64(ReplayCount(h)))
	case !o.CarriesDeaths:
		return addSat(before, died)
	}
	if len(deaths) == 0 {
		return max(died, before)
	}
	origin := deaths[0].Queue
	var now int64
	for _, d := range deaths {
		if d.Queue == origin {
			now = addSat(now, d.Count)
		}
	}
	var carried int64
	if t, ok := domain.ValueTable(h[domain.HeaderReplayDeaths]); ok {
		carried, _ = domain.ValueInt(t[origin])
	}
	fresh := max(now-max(carried, 0), 0)
	if fresh > 0 && deaths[0].Reason == domain.ReasonDeliveryLimit {
		if limit, known := o.OriginDeliveryLimits[origin]; known && limit >= 0 {
			fresh = addSat(fresh, limit)
		}
	}
	return max(died, addSat(before, fresh))
}

// ReplayCount is how many times warren has replayed the message.
func ReplayCount(h amqp.Table) int {
	n, ok := domain.ValueInt(h[domain.HeaderReplayCount])
	if !ok || n < 0 {
		return 0
	}
	return clampInt(n)
}

func addSat(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

func clampInt(n int64) int {
	switch {
	case n < 0:
		return 0
	case n > math.MaxInt32:
		return math.MaxInt32
	}
	return int(n)
}
