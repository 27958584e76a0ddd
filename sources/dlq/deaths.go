package dlq

import (
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// markers reports whether h carries warren's own marks, which change how
// warren treats a message (left out of bulk replays, counted as a loop),
// and the operation they name.
func markers(h amqp.Table) (marked bool, operation string) {
	marked = h[domain.HeaderQuarantineReason] != nil || h[domain.HeaderReplayCount] != nil
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

// ParseDeaths reads the x-death header: an array of tables, most recent
// first. Entries that are not tables are skipped, fields of the wrong
// type are left empty, and a missing or nonsensical count reads as 1
// (the entry exists, so the message died there at least once).
func ParseDeaths(h amqp.Table) []domain.Death {
	return parseDeathsInto(nil, h, true)
}

// parseDeathsInto appends to dst[:0], so a scan reuses one slice; a scan
// also has no use for routing keys.
func parseDeathsInto(dst []domain.Death, h amqp.Table, withKeys bool) []domain.Death {
	dst = dst[:0]
	entries, ok := domain.ValueList(h[domain.HeaderDeath])
	if !ok {
		return dst
	}
	for _, e := range entries {
		t, ok := domain.ValueTable(e)
		if !ok {
			continue
		}
		d := domain.Death{Count: 1}
		d.Queue, _ = domain.ValueText(t["queue"])
		d.Reason, _ = domain.ValueText(t["reason"])
		d.Exchange, _ = domain.ValueText(t["exchange"])
		if n, ok := domain.ValueInt(t["count"]); ok && n > 0 {
			d.Count = n
		}
		d.Time, _ = domain.ValueTime(t["time"])
		d.OriginalExpiration, _ = domain.ValueScalarText(t["original-expiration"])
		if keys, ok := domain.ValueList(t["routing-keys"]); ok && withKeys {
			for _, k := range keys {
				if s, ok := domain.ValueText(k); ok {
					d.RoutingKeys = append(d.RoutingKeys, s)
				}
			}
		}
		dst = append(dst, d)
	}
	return dst
}

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

// Attempts is docs/ARCHITECTURE.md §2's attempt count: the largest of the x-death
// counts summed for the origin queue, x-delivery-count and the
// application's own attempts header, plus warren's replay count.
func Attempts(deaths []domain.Death, origin string, h amqp.Table, attemptsHeader string) int {
	var sum int64
	for _, d := range deaths {
		if d.Queue == origin {
			sum = addSat(sum, d.Count)
		}
	}
	best := sum
	if n, ok := domain.ValueInt(h[domain.HeaderDeliveryCount]); ok && n > best {
		best = n
	}
	if attemptsHeader != "" {
		if n, ok := domain.ValueInt(h[attemptsHeader]); ok && n > best {
			best = n
		}
	}
	return clampInt(addSat(best, int64(ReplayCount(h))))
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
