package format

import (
	"strings"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// movementWords are the words for each movement without a figure: as a
// table cell, and as a sentence that says what it means.
var movementWords = map[domain.Movement]struct{ cell, note string }{
	domain.NoRates:     {Unknown, "drain unknown: rates not fetched yet"},
	domain.Empty:       {"empty", "empty"},
	domain.Held:        {"held", "held: no consumers (a DLQ or parking queue keeps its messages until someone acts)"},
	domain.RetryWait:   {"retry wait", "held until the messages' TTL sends them back (retry queue)"},
	domain.NoConsumers: {"no consumers", "not draining: no consumers"},
	domain.Stalled:     {"stalled", "not draining: consumers are not acknowledging"},
	domain.Steady:      {"steady", "not draining: in = out, the backlog stays"},
	domain.Delayed:     {"delayed", "not ready yet: every message waits out its delayed retry"},
	domain.DLXBacklog:  {"DLX backlog", "nothing to consume: every message is a dead letter held for the DLX"},
}

// Drain is a queue's movement in a table cell: the overview's DRAIN
// column and the DRAIN column of `warren status`.
func Drain(d domain.Drain) string {
	switch d.Movement {
	case domain.Draining:
		return "ETA " + Duration(d.ETA)
	case domain.Growing:
		return "growing +" + PerSecond(d.Growth)
	}
	if w, ok := movementWords[d.Movement]; ok {
		return w.cell
	}
	return Unknown
}

// DrainNote is a queue's movement as a sentence that says what it means,
// where there is room for one: a queue's own screen, and the overview's
// note on a queue in trouble.
func DrainNote(d domain.Drain) string {
	switch d.Movement {
	case domain.Draining:
		return "drains in " + Duration(d.ETA)
	case domain.Growing:
		return "not draining: " + Drain(d)
	}
	if w, ok := movementWords[d.Movement]; ok {
		return w.note
	}
	return movementWords[domain.NoRates].note
}

// DelayedRetry words a quorum queue's delayed-retry setting (RabbitMQ
// 4.3): the broker's own words when it reports them ("all (min: 2000ms,
// max: 10000ms)", "disabled"), else what the arguments or policy ask for
// ("failed (min: 1s)"); "" when nothing says.
func DelayedRetry(d domain.DelayedRetry) string {
	if d.Broker != "" {
		return sanitize.Text(d.Broker)
	}
	if d.Type == "" {
		return ""
	}
	var bounds []string
	if d.Min >= 0 {
		bounds = append(bounds, "min: "+Period(time.Duration(d.Min)*time.Millisecond))
	}
	if d.Max >= 0 {
		bounds = append(bounds, "max: "+Period(time.Duration(d.Max)*time.Millisecond))
	}
	text := sanitize.Text(d.Type)
	if len(bounds) > 0 {
		text += " (" + strings.Join(bounds, ", ") + ")"
	}
	return text
}

// DelayedNote says how many of a queue's messages wait out a delayed
// retry, and under which setting: "3 delayed (retry all (min: 2000ms,
// max: 10000ms)), ready again after the delay"; "" when none is known
// to wait.
func DelayedNote(q domain.Queue) string {
	if q.Delayed == nil || *q.Delayed == 0 {
		return ""
	}
	text := Count(*q.Delayed) + " delayed"
	if r := DelayedRetry(q.DelayedRetrySetting()); r != "" {
		text += " (delayed retry " + r + ")"
	}
	return text + ", ready again after the delay"
}

// DLXHeldNote says how many dead letters an at-least-once quorum queue
// holds for its DLX: "7 dead letters held for the DLX (21 B)"; "" when
// none is known to be held.
func DLXHeldNote(q domain.Queue) string {
	if q.DLXHeld == nil || *q.DLXHeld == 0 {
		return ""
	}
	text := Count(*q.DLXHeld) + " dead letters held for the DLX"
	if *q.DLXHeld == 1 {
		text = "1 dead letter held for the DLX"
	}
	if q.DLXHeldBytes != nil {
		text += " (" + Bytes(*q.DLXHeldBytes) + ")"
	}
	return text
}

// RetryNote says where a retry queue's messages go and when; empty for
// any other queue.
func RetryNote(q domain.Queue) string {
	if q.RetryTarget == nil {
		return ""
	}
	// A retry loop stays within its vhost: the name says enough.
	text := "retry queue: expired messages go back to " + sanitize.Text(q.RetryTarget.Name)
	if ttl, ok := q.LimitSetting("message-ttl"); ok {
		text += " after " + Period(time.Duration(ttl)*time.Millisecond)
	}
	return text
}

// Effect is the pace of a queue's inbox, by the database's clock: "2.0
// effects/s over the last 1m, last 3s ago".
func Effect(e domain.Effect) string {
	text := Rate(e.Rate) + " effects/s over the last " + Duration(e.Window)
	if age, ok := e.LastAge(); ok {
		return text + ", last " + Ago(age)
	}
	return text + ", none ever recorded"
}
