package format

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// HashMark prefixes a logical ID that is a content hash in a list, where
// there is no room to say so in words; HashLegend explains it.
const (
	HashMark   = "#"
	HashLegend = HashMark + " logical ID is a content hash"
)

// LogicalID is a dead letter's logical ID in a list: a content hash is
// marked, because two copies of one business message that differ by a
// byte get two hashes and will not be recognised as one.
func LogicalID(l domain.DeadLetter) string {
	if l.LogicalIDFrom == domain.IDHash {
		return HashMark + sanitize.Text(l.LogicalID)
	}
	return sanitize.Text(l.LogicalID)
}

// LogicalIDSource is a dead letter's logical ID with where it came from,
// for a view of one message.
func LogicalIDSource(l domain.DeadLetter) string {
	id := sanitize.Text(l.LogicalID)
	switch {
	case l.LogicalIDFrom == domain.IDHash:
		return id + " (content hash: no configured ID found)"
	case l.LogicalIDFrom != "":
		return id + " (from " + sanitize.Text(string(l.LogicalIDFrom)) + ")"
	}
	return id
}

// MatchesLogicalID reports whether s names the dead letter's logical ID,
// as typed or as a list shows it, so an ID copied from a list works.
func MatchesLogicalID(l domain.DeadLetter, s string) bool {
	if s == l.LogicalID || (l.LogicalIDFrom == domain.IDHash && s == HashMark+l.LogicalID) {
		return true
	}
	// An ID holding control characters is shown escaped (\x1b…): what
	// the operator copies from the screen names it too.
	shown := sanitize.Text(l.LogicalID)
	return shown != l.LogicalID && s == shown
}

// NotDeadLettered words a message that carries no x-death header: the
// broker never dead-lettered it (it was published straight into the
// queue, or a consumer republished it without its history), so it has no
// reason, no origin from the broker and no time of death.
const NotDeadLettered = "not dead-lettered by the broker (no x-death)"

// NoDeath is NotDeadLettered in a list's REASON cell, where there is no
// room for the sentence; NoDeathLegend explains it under the list.
const (
	NoDeath       = "no x-death"
	NoDeathLegend = NotDeadLettered + ": published straight into the queue"
)

// DeadLettered reports whether the broker dead-lettered the message (it
// carries x-death) or a framework moved it to its error queue with its
// convention's headers (docs/ARCHITECTURE.md §4.12).
func DeadLettered(l domain.DeadLetter) bool { return len(l.Deaths) > 0 || Framework(l) }

// Framework reports whether a framework's convention, not the broker,
// says why the message failed.
func Framework(l domain.DeadLetter) bool {
	c := l.Failure.Convention
	return c != "" && c != domain.ConventionBroker
}

// Reason is a dead letter's reason in a list: the broker's reason, or for
// a framework's letter its exception's type without namespace (else its
// kind); NoDeath when nothing dead-lettered it.
func Reason(l domain.DeadLetter) string {
	if !DeadLettered(l) {
		return NoDeath
	}
	if Framework(l) && l.Failure.ErrorType != "" {
		return sanitize.Text(ShortType(l.Failure.ErrorType))
	}
	return orUnknown(sanitize.Text(l.Reason))
}

// ShortType is an exception type without its namespace or package:
// Orders.OrderNotFoundException → OrderNotFoundException.
func ShortType(t string) string {
	if i := strings.LastIndexAny(t, ".$+"); i >= 0 && i < len(t)-1 {
		return t[i+1:]
	}
	return t
}

// Origin is where a dead letter came from in a list: its origin queue,
// else the exchange/routing key its convention names; without x-death or
// a convention only what the x-last-death-* or x-first-death-* headers
// name.
func Origin(l domain.DeadLetter) string { return orUnknown(sanitize.Text(l.Origin())) }

// Convention names the convention a letter was read by, as an operator
// knows it: "RabbitMQ dead-lettering (x-death)", "MassTransit", …
func Convention(name string) string {
	switch name {
	case domain.ConventionBroker:
		return "RabbitMQ dead-lettering (x-death)"
	case domain.ConventionMassTransit:
		return "MassTransit error queue (MT-Fault-*)"
	case domain.ConventionSpring:
		return "Spring AMQP republish (x-exception-*, x-original-*)"
	case domain.ConventionNServiceBus:
		return "NServiceBus error queue (NServiceBus.ExceptionInfo.*)"
	case domain.ConventionEasyNetQ:
		return "EasyNetQ error envelope (body)"
	case domain.ConventionRascal:
		return "rascal recovery (rascal header)"
	case domain.ConventionWatermill:
		return "Watermill poison queue (reason_poisoned)"
	case "":
		return "none: no x-death and no framework's error headers"
	}
	return sanitize.Text(name) + " (configured convention)"
}

func orUnknown(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}

// Counter is one of a message's delivery counters, worded with what it
// counts.
type Counter struct{ Name, Value string }

// DeliveryCounts are the quorum counters the message carries, each with
// its meaning: x-delivery-count counts the returns the broker holds
// against the delivery limit (every return before 4.0; from 4.0 not
// those of basic.nack), x-acquired-count every time a consumer took the
// message (4.0+). Counters the message does not carry are left out.
func DeliveryCounts(l domain.DeadLetter) []Counter {
	var out []Counter
	if l.DeliveryCount >= 0 {
		out = append(out, Counter{domain.HeaderDeliveryCount, fmt.Sprintf("%d (returns counted toward the delivery limit; from RabbitMQ 4.3 basic.nack returns are not, and a quorum origin's count comes along with its dead letters)", l.DeliveryCount)})
	}
	if l.AcquiredCount >= 0 {
		out = append(out, Counter{domain.HeaderAcquiredCount, fmt.Sprintf("%d (times a consumer took it, whatever it did next)", l.AcquiredCount)})
	}
	return out
}

// ClaimedMarks words warren's marks on a message that names no operation
// the audit log knows: the message's claim, not warren's record; "" when
// it claims none (docs/ARCHITECTURE.md §7).
func ClaimedMarks(l domain.DeadLetter) string {
	if !l.MarksClaimed {
		return ""
	}
	var what []string
	if l.Headers[domain.HeaderQuarantineReason] != nil {
		what = append(what, "quarantined")
	}
	if l.ClaimedReplays > 0 {
		what = append(what, fmt.Sprintf("replayed %d×", l.ClaimedReplays))
	}
	return strings.Join(what, ", ") + " claimed by the message: no operation of the audit log wrote it"
}
