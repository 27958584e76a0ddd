package dlq

import (
	"fmt"

	"github.com/warrenops/warren/domain"
)

// Refusal is a held message warren will not treat as browsable, and why.
// It stays held until it is acted on or the session closes.
type Refusal struct {
	Letter domain.DeadLetter
	Reason string
}

// returnCostsCount reports whether basic.nack with requeue counts toward
// a quorum queue's delivery limit on this broker version
// (domain.ReturnCountsTowardLimit).
func returnCostsCount(version string) bool { return domain.ReturnCountsTowardLimit(version) }

// checkOpen is the guard of docs/ARCHITECTURE.md §4.3 before anything is delivered:
// a quorum queue with a delivery limit on a broker where a return costs a
// count is refused unless the operator knowingly allows it.
//
// From 4.3 a return costs nothing, but a quorum origin's dead letters keep
// the delivery count they reached there (up to its limit + 1): returned
// to a DLQ whose own limit that count already reaches, such a message is
// dropped or dead-lettered again. A DLQ fed by such an origin is refused
// the same way.
func checkOpen(q domain.QueueInfo, o Options) error {
	if !limited(q) || o.AllowLimitRisk {
		return nil
	}
	if !returnCostsCount(q.BrokerVersion) {
		return carriedCountRisk(q, o)
	}
	return &domain.RefusedError{Queue: q, Reason: fmt.Sprintf(
		"it is a quorum queue with delivery limit %d and RabbitMQ %s counts every return toward that limit, "+
			"so browsing adds one delivery to each message it shows and a message already at its limit would be "+
			"dropped or dead-lettered on return; allow the risk explicitly to browse anyway (RabbitMQ 4.3+ returns for free)",
		q.DeliveryLimit, versionText(q.BrokerVersion)),
		Risk: fmt.Sprintf("every message shown gets one more delivery counted against the limit of %d, and one already at its limit is dropped or dead-lettered again when it is returned",
			q.DeliveryLimit)}
}

// carriedCountRisk refuses a quorum DLQ on a broker whose returns are
// free when a quorum origin dead-letters into it messages whose carried
// delivery count reaches its limit; nil when none does.
func carriedCountRisk(q domain.QueueInfo, o Options) error {
	origin, reach := domain.CarriedReach(o.OriginDeliveryLimits, q.DeliveryLimit)
	if origin == "" {
		return nil
	}
	return &domain.RefusedError{Queue: q, Reason: fmt.Sprintf(
		"it is a quorum queue with delivery limit %d, and its origin %s dead-letters messages delivered up to %d times: "+
			"RabbitMQ %s keeps that count, so a message browsed here and returned is dropped or dead-lettered again, "+
			"returns being free or not; raise this queue's delivery limit above %d, or allow the risk explicitly to browse anyway",
		q.DeliveryLimit, origin, reach, versionText(q.BrokerVersion), reach),
		Risk: fmt.Sprintf("a message from %s carries a delivery count of up to %d, at or past this queue's limit of %d: returned at the end of the browse, it is dropped or dead-lettered again",
			origin, reach, q.DeliveryLimit)}
}

func versionText(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// refusal says why a held quorum message is not browsable: it has no
// headroom left, so the return at the end of the browse (before 4.3) or
// a lost channel (any version) would push it past its limit.
func refusal(q domain.QueueInfo, dl domain.DeadLetter) (string, bool) {
	if !limited(q) || dl.Headroom > 0 {
		return "", false
	}
	returns := max(dl.DeliveryCount, 0)
	if returnCostsCount(q.BrokerVersion) {
		return fmt.Sprintf("returned %d times against a delivery limit of %d: returning it again will dead-letter or drop it; quarantine it to keep it",
			returns, q.DeliveryLimit), true
	}
	return fmt.Sprintf("returned %d times against a delivery limit of %d: if this session's channel is lost it will be dead-lettered or dropped; quarantine it or close the session soon",
		returns, q.DeliveryLimit), true
}

// sessionNotes are the caveats an operator should read with the first
// page; held is what other clients hold of the queue (HeldElsewhere).
func sessionNotes(q domain.QueueInfo, consumers, held int) []string {
	var notes []string
	if held > 0 {
		notes = append(notes, domain.HeldNote(held))
	}
	if consumers > 0 && q.Type != domain.TypeStream {
		if consumers == 1 {
			notes = append(notes, "DLQ has 1 consumer: it cannot see held messages, and messages it takes are not browsed")
		} else {
			notes = append(notes, fmt.Sprintf("DLQ has %d consumers: they cannot see held messages, and messages they take are not browsed", consumers))
		}
	}
	switch {
	case q.Type == domain.TypeStream:
		notes = append(notes, "stream: read by offset, nothing is removed or returned")
	case limited(q) && returnCostsCount(q.BrokerVersion):
		notes = append(notes, fmt.Sprintf("delivery limit %d: this browse adds one delivery to every message it shows (override in force); order not kept", q.DeliveryLimit))
	case limited(q):
		notes = append(notes, fmt.Sprintf("delivery limit %d: messages are returned with basic.nack, which does not count on RabbitMQ %s; a lost channel does; order not kept", q.DeliveryLimit, q.BrokerVersion))
	case q.Type == domain.TypeQuorum:
		notes = append(notes, "quorum queue: returned messages may not keep their order")
	}
	if q.MessageTTL != nil && q.Type != domain.TypeStream {
		// A held message cannot expire; one held past its TTL expires
		// the moment it is returned.
		fate := "dropped: nothing keeps it"
		if q.HasDLX {
			fate = "dead-lettered through this queue's dead-letter exchange"
		}
		notes = append(notes, fmt.Sprintf("message TTL %v: a message held longer than that expires as it is returned, %s; close the session before then", *q.MessageTTL, fate))
	}
	return notes
}

// limited reports whether the quorum delivery-limit guard applies.
func limited(q domain.QueueInfo) bool {
	return q.Type == domain.TypeQuorum && q.DeliveryLimit >= 0
}
