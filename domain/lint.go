package domain

import (
	"fmt"
	"sort"
	"strings"
)

// Finding is one topology problem (docs/ARCHITECTURE.md §4.7).
type Finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Vhost    string `json:"vhost"`
	Queue    string `json:"queue"`
	Message  string `json:"message"`
}

// Severities: an error loses messages silently as configured; a warning
// can lose or hide them in some circumstance.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// The checks, by stable ID.
const (
	CheckDLXMissing      = "dlx-missing"
	CheckDLXUnroutable   = "dlx-unroutable"
	CheckAtLeastOnce     = "dlx-at-least-once-overflow"
	CheckDropHead        = "overflow-drop-head"
	CheckDLQDeliveryLim  = "dlq-quorum-delivery-limit"
	CheckDLQConsumers    = "dlq-has-consumers"
	CheckNoDeliveryLimit = "quorum-no-delivery-limit"
	CheckLimitNoDLX      = "quorum-limit-no-dlx"
	CheckDLXBacklog      = "dlx-backlog"
	CheckDLXCycle        = "dlx-cycle"
)

// Checks describes every check, for help texts.
var Checks = []struct{ ID, Severity, Summary string }{
	{CheckDLXMissing, SeverityError, "the dead-letter exchange does not exist: dead letters are dropped"},
	{CheckDLXUnroutable, SeverityError, "the dead-letter exchange routes nowhere (no matching binding): dead letters are dropped"},
	{CheckAtLeastOnce, SeverityError, "quorum queue with dead-letter-strategy=at-least-once but overflow is not reject-publish"},
	{CheckDropHead, SeverityWarning, "length limit with overflow=drop-head: the oldest messages are discarded"},
	{CheckDLQDeliveryLim, SeverityWarning, "quorum DLQ with a delivery limit: browsing can drop messages"},
	{CheckDLQConsumers, SeverityWarning, "DLQ with consumers: held messages are hidden from browsing"},
	{CheckNoDeliveryLimit, SeverityWarning, "quorum queue with a DLX but no delivery-limit: poison messages loop"},
	{CheckLimitNoDLX, SeverityError, "quorum queue with a delivery limit (20 by default from 4.0) and no DLX: poison messages are dropped"},
	{CheckDLXBacklog, SeverityWarning, "quorum queue holding at-least-once dead letters its DLX has not taken (RabbitMQ 4.3 reports them)"},
	{CheckDLXCycle, SeverityError, "queues that dead-letter into each other by expiry or length limit alone: the broker drops what comes round"},
}

// Lint runs the topology checks over a snapshot (its queues, their DLQ
// pairing and Topology). It is pure: the snapshot holds all it reads.
// Findings come errors first, then by vhost, queue and check.
func Lint(s *Snapshot) []Finding {
	version := s.Overview.RabbitMQVersion
	exists := map[QueueRef]bool{}
	for _, q := range s.Queues {
		exists[q.Ref()] = true
	}
	var out []Finding
	for _, q := range s.Queues {
		add := func(check, severity, format string, args ...any) {
			out = append(out, Finding{Check: check, Severity: severity, Vhost: q.Vhost, Queue: q.Name,
				Message: fmt.Sprintf(format, args...)})
		}
		lintRoute(q, &s.Topology, func(r QueueRef) bool { return exists[r] }, add)
		if q.Type == "quorum" && q.HasDLX && q.StringSetting("dead-letter-strategy") == "at-least-once" && q.Overflow() != "reject-publish" {
			add(CheckAtLeastOnce, SeverityError,
				"dead-letter-strategy=at-least-once needs overflow=reject-publish; with overflow=%s the broker falls back to at-most-once and drop-head discards messages whose dead-lettering is not yet confirmed",
				q.Overflow())
		}
		if q.Type != "stream" && q.HasLengthLimit() && q.Overflow() == "drop-head" {
			fate := "lost (no dead-letter exchange)"
			if q.HasDLX {
				fate = "dead-lettered with reason maxlen"
			}
			add(CheckDropHead, SeverityWarning,
				"length limit with overflow=drop-head: when full, the oldest messages are %s although publishers were told they were accepted; reject-publish pushes back instead", fate)
		}
		if isDLQ(q) {
			lim := q.DeliveryLimit(version)
			switch {
			case q.Type != "quorum" || lim < 0:
			case ReturnCountsTowardLimit(version):
				add(CheckDLQDeliveryLim, SeverityWarning,
					"quorum DLQ with delivery limit %d: RabbitMQ %s counts each return of a browsed message as a delivery, and a message past the limit is dropped or dead-lettered again; warren refuses to browse it unless overridden (RabbitMQ 4.3 returns for free)", lim, version)
			default:
				// From 4.3 a return costs no delivery, but a quorum
				// origin's dead letters keep the count they reached there:
				// the browse guard refuses what this judges
				// (sources/dlq/guard.go, carriedCountRisk).
				if origin, reach := CarriedReach(s.OriginDeliveryLimits(q.Ref()), lim); origin != "" {
					add(CheckDLQDeliveryLim, SeverityWarning,
						"quorum DLQ with delivery limit %d, fed by %s, whose dead letters carry a delivery count of up to %d: RabbitMQ %s keeps that count, so a message browsed here and returned is dropped or dead-lettered again; warren refuses to browse it unless overridden; raise this queue's delivery limit above %d", lim, origin, reach, version, reach)
				}
			}
			// The cheap queue list carries no consumer count: only a
			// queue read with its statistics can trip this check.
			if q.HasRates && q.Consumers > 0 {
				add(CheckDLQConsumers, SeverityWarning,
					"DLQ with %d consumer(s): messages they hold are invisible to browsing, and they may be consuming dead letters away", q.Consumers)
			}
		}
		// A DLQ's own limit has its check above.
		if lim := q.DeliveryLimit(version); q.Type == "quorum" && !q.HasDLX && lim >= 0 && !isDLQ(q) {
			if _, set := q.LimitSetting("delivery-limit"); set {
				add(CheckLimitNoDLX, SeverityError,
					"delivery limit %d and no dead-letter exchange: a message returned %d times is dropped silently; set a dead-letter exchange", lim, lim)
			} else {
				add(CheckLimitNoDLX, SeverityError,
					"no delivery-limit is set, so RabbitMQ %s applies its default of %d, and there is no dead-letter exchange: a message returned %d times is dropped silently; set a dead-letter exchange, or delivery-limit=-1 to keep redelivering", version, lim, lim)
			}
		}
		if q.DLXHeld != nil && *q.DLXHeld > 0 {
			add(CheckDLXBacklog, SeverityWarning, "%s", dlxBacklog(q, s))
		}
		if q.Type == "quorum" && q.HasDLX && q.DeliveryLimit(version) < 0 {
			add(CheckNoDeliveryLimit, SeverityWarning,
				"quorum queue with a dead-letter exchange but no delivery-limit: a poison message is redelivered forever and never dead-lettered; set the delivery-limit policy key or x-delivery-limit")
		}
	}
	out = append(out, lintCycles(s, func(r QueueRef) bool { return exists[r] })...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		if a.Vhost != b.Vhost {
			return a.Vhost < b.Vhost
		}
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		return a.Check < b.Check
	})
	return out
}

// dlxBacklog says why a quorum queue still holds at-least-once dead
// letters: its dead-letter exchange is missing or routes nowhere, or a
// target is full and refuses them, or (none of those seen) the target
// has not confirmed them yet.
func dlxBacklog(q Queue, s *Snapshot) string {
	held, them, whereTheyGo := fmt.Sprintf("%d dead letters are held", *q.DLXHeld), "them", "where they go depends"
	if *q.DLXHeld == 1 {
		held, them, whereTheyGo = "1 dead letter is held", "it", "where it goes depends"
	}
	held += " by this queue until the dead-letter target confirms " + them
	byRef := map[QueueRef]*Queue{}
	for i := range s.Queues {
		byRef[s.Queues[i].Ref()] = &s.Queues[i]
	}
	r, ok := s.Topology.DeadLetterRoute(q, func(ref QueueRef) bool { return byRef[ref] != nil })
	switch {
	case !q.HasDLX:
		return held + ", and the queue has no dead-letter exchange now"
	case !ok:
		return held + "; " + whereTheyGo + " on each message's routing key"
	case r.Missing:
		return fmt.Sprintf("%s: the dead-letter exchange \"%s\" does not exist", held, r.Exchange.Name)
	case len(r.Targets) == 0:
		return held + ": the dead-letter exchange routes " + them + " nowhere (no matching binding)"
	}
	for _, ref := range r.Targets {
		t := byRef[ref]
		if t == nil || t.Overflow() != "reject-publish" {
			continue
		}
		if n, ok := t.LimitSetting("max-length"); ok && t.Messages >= n {
			return fmt.Sprintf("%s: the target %s is full (%d of max-length %d, overflow=reject-publish) and refuses %s", held, ref.Name, t.Messages, n, them)
		}
	}
	return held + ": the target has not confirmed " + them + " yet (slow, blocked by an alarm, or refusing " + them + ")"
}

func lintRoute(q Queue, t *Topology, exists func(QueueRef) bool, add func(check, severity, format string, args ...any)) {
	r, ok := t.DeadLetterRoute(q, exists)
	fate, they := "dead letters from this queue are dropped silently", "they are dropped silently"
	if q.Type == "quorum" && q.StringSetting("dead-letter-strategy") == "at-least-once" && q.Overflow() == "reject-publish" {
		// At least once, the queue keeps what it cannot dead-letter.
		fate = "dead letters stay in this queue (at-least-once) until it can route them, counted against its length limit, and publishers are refused once it is full"
		they = fate
	}
	switch {
	case !ok || len(r.Targets) > 0:
	case r.Missing:
		add(CheckDLXMissing, SeverityError,
			"dead-letter exchange \"%s\" does not exist: %s", r.Exchange.Name, fate)
	case r.Exchange.Name == "":
		add(CheckDLXUnroutable, SeverityError,
			"dead letters go through the default exchange to queue \"%s\", which does not exist: %s", q.DeadLetterRoutingKey, they)
	case r.Exact:
		add(CheckDLXUnroutable, SeverityError,
			"dead-letter exchange \"%s\" has no binding for routing key \"%s\": %s", r.Exchange.Name, q.DeadLetterRoutingKey, fate)
	default:
		add(CheckDLXUnroutable, SeverityError,
			"dead-letter exchange \"%s\" has no bindings: %s", r.Exchange.Name, fate)
	}
}

// isDLQ reports whether q receives dead letters from some queue other
// than its own DLQ: in a retry loop (work ⇄ wait) each queue dead-letters
// into the other, and neither is a DLQ in the operator's sense.
func isDLQ(q Queue) bool {
	for _, src := range q.DLQOf {
		if q.DLQ == nil || src != *q.DLQ {
			return true
		}
	}
	return false
}

// lintCycles finds the queues that dead-letter round a cycle by
// themselves: each one of it dead-letters without a consumer's reject
// (a message-ttl, or a length limit whose overflow dead-letters), into
// the next. RabbitMQ drops a message that reaches a queue it already
// went through when nothing rejected it on the way round (a retry loop
// whose consumer rejects is no such cycle), so what comes round is lost
// without a trace.
func lintCycles(s *Snapshot, exists func(QueueRef) bool) []Finding {
	next := map[QueueRef][]QueueRef{}
	for _, q := range s.Queues {
		if !deadLettersByItself(q) {
			continue
		}
		if r, ok := s.Topology.DeadLetterRoute(q, exists); ok && !r.Missing {
			next[q.Ref()] = r.Targets
		}
	}
	var out []Finding
	for _, q := range s.Queues {
		path := cycleFrom(q.Ref(), next)
		if path == nil {
			continue
		}
		names := make([]string, len(path))
		for i, r := range path {
			names[i] = r.Name
		}
		out = append(out, Finding{Check: CheckDLXCycle, Severity: SeverityError, Vhost: q.Vhost, Queue: q.Name,
			Message: fmt.Sprintf("dead letters go round %s by expiry or length limit alone: RabbitMQ drops a message that comes back to a queue it went through unless a consumer rejected it on the way, so they are lost silently; end the cycle in a queue that keeps them (no message-ttl), or dead-letter elsewhere",
				strings.Join(names, " → "))})
	}
	return out
}

// deadLettersByItself reports a queue that dead-letters with no
// consumer's help: by its message-ttl, or by a length limit whose
// overflow dead-letters the messages it drops.
func deadLettersByItself(q Queue) bool {
	if !q.HasDLX || q.Type == "stream" {
		return false
	}
	if _, ok := q.LimitSetting("message-ttl"); ok {
		return true
	}
	return q.HasLengthLimit() && (q.Overflow() == "drop-head" || q.Overflow() == "reject-publish-dlx")
}

// cycleFrom is the path from start round to start again through next,
// start first and last; nil when start is on no cycle.
func cycleFrom(start QueueRef, next map[QueueRef][]QueueRef) []QueueRef {
	seen := map[QueueRef]bool{}
	var walk func(at QueueRef, path []QueueRef) []QueueRef
	walk = func(at QueueRef, path []QueueRef) []QueueRef {
		for _, n := range next[at] {
			if n == start {
				return append(append([]QueueRef(nil), path...), start)
			}
			if seen[n] {
				continue
			}
			seen[n] = true
			if p := walk(n, append(path, n)); p != nil {
				return p
			}
		}
		return nil
	}
	return walk(start, []QueueRef{start})
}

// CarriedReach is the quorum origin (of origins' delivery limits) whose
// dead letters carry a delivery count at or past limit, with that count;
// "" when none does.
func CarriedReach(origins map[string]int64, limit int64) (origin string, reach int64) {
	reach = -1
	for name, lim := range origins {
		if c := lim + 1; c >= limit && (c > reach || (c == reach && name < origin)) {
			origin, reach = name, c
		}
	}
	return origin, reach
}
