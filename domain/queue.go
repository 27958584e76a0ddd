package domain

import (
	"encoding/json"
	"math"
	"sort"
	"time"
)

// Setting returns a queue setting by its policy key ("dead-letter-exchange",
// "overflow", ...), from the x- argument first and then the effective
// policy. Arguments win over policies for the string settings warren reads
// (RabbitMQ resolves dead-letter-exchange, routing key, overflow and
// strategy that way); numeric limits use LimitSetting.
func (q Queue) Setting(key string) (any, bool) {
	if v, ok := q.Arguments["x-"+key]; ok {
		return v, true
	}
	v, ok := q.EffectiveDefinition[key]
	return v, ok
}

// StringSetting is Setting as text; "" when absent or not text.
func (q Queue) StringSetting(key string) string {
	v, _ := q.Setting(key)
	s, _ := v.(string)
	return s
}

// LimitSetting returns a numeric limit (delivery-limit, max-length, ...):
// the smaller of argument and policy when both are set, as RabbitMQ does.
func (q Queue) LimitSetting(key string) (int64, bool) {
	var out int64
	found := false
	for _, v := range []any{q.Arguments["x-"+key], q.EffectiveDefinition[key]} {
		f, ok := ToFloat(v)
		if !ok {
			continue
		}
		if n := int64(f); !found || n < out {
			out, found = n, true
		}
	}
	return out, found
}

// DeliveryLimit returns the quorum queue's delivery limit, or -1 when
// there is none, resolved as the broker does: argument x-delivery-limit
// or policy delivery-limit, the smaller when both are set; from RabbitMQ
// 4.0 the larger when either is negative (an argument of -1 does not
// lift a policy's 5), and 20 when neither is set. A negative limit means
// none. A version warren cannot read is taken for 4.0 or later, whose
// default limit the guard must respect. Other queue types have no
// delivery limit.
func (q Queue) DeliveryLimit(brokerVersion string) int64 {
	if q.Type != "quorum" {
		return -1
	}
	v := ParseVersion(brokerVersion)
	modern := v.AtLeast(4, 0) || v == (Version{})
	arg, hasArg := ToFloat(q.Arguments["x-delivery-limit"])
	pol, hasPol := ToFloat(q.EffectiveDefinition["delivery-limit"])
	var n int64
	switch {
	case hasArg && hasPol && modern && (arg < 0 || pol < 0):
		n = int64(max(arg, pol))
	case hasArg && hasPol:
		n = int64(min(arg, pol))
	case hasArg:
		n = int64(arg)
	case hasPol:
		n = int64(pol)
	case modern:
		return 20
	default:
		return -1
	}
	if n < 0 {
		return -1
	}
	return n
}

// Overflow is the queue's overflow behaviour; drop-head when unset.
func (q Queue) Overflow() string {
	if s := q.StringSetting("overflow"); s != "" {
		return s
	}
	return "drop-head"
}

// HasLengthLimit reports whether max-length or max-length-bytes is set.
func (q Queue) HasLengthLimit() bool {
	_, a := q.LimitSetting("max-length")
	_, b := q.LimitSetting("max-length-bytes")
	return a || b
}

// ResolveDeadLettering fills the DLX fields from arguments and policy.
func (q *Queue) ResolveDeadLettering() {
	v, ok := q.Setting("dead-letter-exchange")
	q.HasDLX = ok
	q.DeadLetterExchange, _ = v.(string)
	q.DeadLetterRoutingKey = q.StringSetting("dead-letter-routing-key")
}

// OldestAge is now minus the head message's timestamp; ok is false when
// it is unknown (OldestUnknownReason says why).
func (q Queue) OldestAge(now time.Time) (time.Duration, bool) {
	if q.HeadMessageTimestamp == nil {
		return 0, false
	}
	d := now.Sub(*q.HeadMessageTimestamp)
	if d < 0 {
		d = 0
	}
	return d, true
}

// DrainETA is the time to empty a backlog at publish rate lambda and
// consume rate mu (docs/ARCHITECTURE.md §4.1): backlog ÷ (μ − λ) when μ > λ. When
// λ ≥ μ the queue is not draining. An empty backlog is drained now.
func DrainETA(backlog int64, lambda, mu float64) (eta time.Duration, draining bool) {
	if backlog <= 0 {
		return 0, true
	}
	if mu <= lambda || math.IsNaN(mu) || math.IsNaN(lambda) {
		return 0, false
	}
	secs := float64(backlog) / (mu - lambda)
	if secs > float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// Backlog is what consumers can drain: the queue's total messages, which
// count the ready, the unacknowledged and the delayed ones (a delayed
// message is ready again after its delay), less the dead letters an
// at-least-once quorum queue holds for its DLX: RabbitMQ 4.3 counts them
// in messages, but no consumer ever gets them (docs/ARCHITECTURE.md §4.1).
// The depth comes from the cheap list and DLXHeld from the statistics,
// which lag; the backlog is never below 0.
func (q Queue) Backlog() int64 {
	n := q.Messages
	if q.DLXHeld != nil {
		n -= *q.DLXHeld
	}
	return max(n, 0)
}

// DrainETA applies DrainETA to the queue's backlog and rates; draining
// is false when rates were not fetched.
func (q Queue) DrainETA() (time.Duration, bool) {
	if !q.HasRates {
		return 0, false
	}
	// As Drain judges it: a queue whose only messages are dead letters
	// for its DLX is not drained, and its consumers drain none of them.
	switch d := q.Drain(); d.Movement {
	case Draining:
		return d.ETA, true
	case Empty:
		return 0, true
	}
	return 0, false
}

// Movement is how a queue's backlog moves (docs/ARCHITECTURE.md §4.1), the one
// judgement every view words its own way.
type Movement int

const (
	// NoRates: the rates were not fetched, so nothing can be said.
	NoRates Movement = iota
	// Empty: nothing to drain.
	Empty
	// Draining: μ > λ; Drain.ETA says when it is empty.
	Draining
	// Growing: λ > μ; Drain.Growth is λ − μ per second.
	Growing
	// Delayed: nothing is ready or unacknowledged, and messages wait out
	// a quorum queue's delayed retry (RabbitMQ 4.3): they are ready
	// again after their delay.
	Delayed
	// DLXBacklog: the only messages are dead letters an at-least-once
	// quorum queue holds until its dead-letter target takes them; no
	// consumer drains them.
	DLXBacklog
	// NoConsumers: messages wait and nobody consumes them.
	NoConsumers
	// Held: a DLQ or a parking queue without consumers keeps its
	// messages until an operator acts, as it is meant to.
	Held
	// RetryWait: a retry queue without consumers keeps its messages
	// until their TTL sends them back to RetryTarget, as it is meant to.
	RetryWait
	// Stalled: consumers are attached but nothing is acknowledged.
	Stalled
	// Steady: messages flow out as fast as they come in, so the backlog
	// stays.
	Steady
)

// Drain is a queue's movement with its figure.
type Drain struct {
	Movement Movement
	ETA      time.Duration // Draining
	Growth   float64       // Growing, messages per second
}

// Drain judges the queue's movement from its depth, rates and consumers.
// A queue holding only delayed messages, or only dead letters for its
// DLX, is not empty.
func (q Queue) Drain() Drain {
	switch {
	case q.Messages == 0: // the depth is known without rates
		return Drain{Movement: Empty}
	case !q.HasRates:
		return Drain{Movement: NoRates}
	case q.Backlog() == 0:
		return Drain{Movement: DLXBacklog}
	}
	if eta, ok := DrainETA(q.Backlog(), q.PublishRate, q.AckRate); ok {
		return Drain{Movement: Draining, ETA: eta}
	}
	switch {
	case q.PublishRate > q.AckRate:
		return Drain{Movement: Growing, Growth: q.PublishRate - q.AckRate}
	case q.Ready == 0 && q.Unacked == 0 && q.Delayed != nil && *q.Delayed > 0:
		return Drain{Movement: Delayed}
	case q.Consumers == 0 && (q.IsDLQ() || q.Parking):
		return Drain{Movement: Held}
	case q.Consumers == 0 && q.RetryTarget != nil:
		return Drain{Movement: RetryWait}
	case q.Consumers == 0:
		return Drain{Movement: NoConsumers}
	case q.AckRate == 0:
		return Drain{Movement: Stalled}
	}
	return Drain{Movement: Steady}
}

// DelayedRetry is a quorum queue's delayed retry (RabbitMQ 4.3): returned
// messages wait between Min and Max before they are ready again.
type DelayedRetry struct {
	// Broker is the setting in the broker's words (delayed_retry); ""
	// when it does not say (before 4.3, or without statistics).
	Broker string
	// Type, Min and Max (milliseconds) come from the x-delayed-retry-*
	// arguments, else the delayed-retry-* policy keys; "" and -1 when
	// neither sets them.
	Type     string
	Min, Max int64
}

// Set reports whether the queue's delayed retry is known to be on: the
// broker says so, or an argument or policy key asks for it.
func (d DelayedRetry) Set() bool {
	if d.Broker != "" {
		return d.Broker != "disabled"
	}
	return d.Type != "" && d.Type != "disabled"
}

// DelayedRetrySetting reads the queue's delayed-retry setting from what
// the broker reports and from its arguments and policy.
func (q Queue) DelayedRetrySetting() DelayedRetry {
	d := DelayedRetry{Broker: q.DelayedRetry, Type: q.StringSetting("delayed-retry-type"), Min: -1, Max: -1}
	for key, into := range map[string]*int64{"delayed-retry-min": &d.Min, "delayed-retry-max": &d.Max} {
		if v, ok := q.Setting(key); ok {
			if f, ok := ToFloat(v); ok {
				*into = int64(f)
			}
		}
	}
	return d
}

// DefaultStatsInterval is RabbitMQ's collect_statistics_interval default.
// The API does not publish the configured value, so figures are taken to
// lag by up to this much.
const DefaultStatsInterval = 5 * time.Second

// SortQueues orders queues by vhost then name, as the API lists them.
func SortQueues(qs []Queue) {
	sort.SliceStable(qs, func(i, j int) bool {
		if qs[i].Vhost != qs[j].Vhost {
			return qs[i].Vhost < qs[j].Vhost
		}
		return qs[i].Name < qs[j].Name
	})
}

// How a queue was paired with its DLQ (docs/ARCHITECTURE.md §4.12).
const (
	PairedByDLX    = "dlx"      // its dead-letter exchange routes there
	PairedByConfig = "config"   // the config names it
	PairedByNaming = "naming"   // a framework's naming: orders → orders_error
	PairedByLetter = "messages" // the error queue's messages name it as their origin
)

// ToFloat reads a number the management API gave as JSON.
func ToFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}
