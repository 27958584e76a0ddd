// Package domain holds warren's words, which the adapters (sources/...)
// fill and the front ends (cli, ui) show: a queue and its reference, a
// snapshot of the broker, a dead letter and its failure, failure groups,
// the filter language, a DLQ's statistics and an inbox status. It does no
// I/O. docs/ARCHITECTURE.md draws the layers.
package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// Death is one x-death entry: a queue and reason, counted.
type Death struct {
	Queue              string    `json:"queue"`
	Reason             string    `json:"reason"` // rejected | expired | maxlen | delivery_limit
	Exchange           string    `json:"exchange"`
	RoutingKeys        []string  `json:"routing_keys"`
	Count              int64     `json:"count"`
	Time               time.Time `json:"time"` // first death for this queue+reason
	OriginalExpiration string    `json:"original_expiration,omitempty"`
}

// IDSource says where a logical ID came from.
type IDSource string

// Logical ID sources; IDHash marks a content-hash fallback.
const (
	IDMessageID IDSource = "message_id"
	IDHeader    IDSource = "header"
	IDJSON      IDSource = "json"
	IDHash      IDSource = "hash"
)

// DeadLetter is one message of a DLQ as warren understands it.
type DeadLetter struct {
	// Position is the message's index in the browse, from 0.
	Position int
	// DeliveryTag is valid on the browse session's channel only.
	DeliveryTag uint64
	// Offset is set for streams instead of a delivery tag.
	Offset      int64
	Redelivered bool

	MessageID      string
	LogicalID      string
	LogicalIDFrom  IDSource
	Reason         string
	OriginQueue    string
	OriginExchange string
	RoutingKeys    []string
	Attempts       int
	ReplayCount    int // x-warren-replay-count
	DeadLetteredAt time.Time
	Deaths         []Death
	Size           int
	Quarantined    bool
	// MarksClaimed says the message carries warren's own marks
	// (x-warren-quarantine-reason, x-warren-replay-count) for an
	// operation the audit log does not know: a publisher's claim, not
	// believed, so Quarantined and ReplayCount leave them out;
	// ClaimedReplays is the replay count it claims.
	MarksClaimed   bool
	ClaimedReplays int
	// DeliveryCount is x-delivery-count (quorum), -1 when absent: the
	// returns the broker counts toward the delivery limit (every return
	// before 4.0; from 4.0 not those of basic.nack).
	DeliveryCount int64
	// AcquiredCount is x-acquired-count (quorum, 4.0+), -1 when absent:
	// how many times a consumer acquired the message, whatever it did
	// next.
	AcquiredCount int64
	// Headroom is how many more returns a quorum message survives before
	// its delivery limit; -1 when there is no limit.
	Headroom int64

	// Failure is why and where the message failed, as the convention
	// that wrote it says (docs/ARCHITECTURE.md §4.12); Group is the ID of
	// its failure group.
	Failure Failure
	Group   string

	// Properties, Headers and Body are the message's; for an envelope
	// convention (EasyNetQ) they are the original message's inside it,
	// and Raw keeps the envelope as it arrived.
	Properties Properties
	Headers    map[string]any
	Body       []byte // nil in statistics scans
	Raw        *Enveloped
	// BodyDigest is "sha256:" and the hex sha256 of Body when the source
	// read it with the body and checked the two agree (an export line
	// carries its body's); "" when the source has none.
	BodyDigest string
}

// Origin is where the letter came from in one word: its origin queue,
// else the exchange/routing key its convention names, else "".
func (d DeadLetter) Origin() string {
	if d.OriginQueue != "" {
		return d.OriginQueue
	}
	return d.Failure.Origin()
}

// Size is a number of bytes, as a body's size or a selection's total.
type Size int64

// String words the size in binary multiples: 512 B, 1.5 KiB, 3.0 MiB.
func (n Size) String() string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", int64(n))
	}
	div, exp := Size(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// BusinessID is the logical ID an inbox can know, or "" when there is
// none: a content hash is warren's own fallback, never a consumer's key.
func (d DeadLetter) BusinessID() string {
	if d.LogicalIDFrom == IDHash {
		return ""
	}
	return d.LogicalID
}

// BusinessIDs are the letters' business IDs, in order, "" where a letter
// has none.
func BusinessIDs(letters []DeadLetter) []string {
	ids := make([]string, len(letters))
	for i, d := range letters {
		ids[i] = d.BusinessID()
	}
	return ids
}

// Properties are the AMQP basic properties of a message.
type Properties struct {
	ContentType     string    `json:"content_type"`
	ContentEncoding string    `json:"content_encoding"`
	DeliveryMode    uint8     `json:"delivery_mode"`
	Priority        uint8     `json:"priority"`
	CorrelationID   string    `json:"correlation_id"`
	ReplyTo         string    `json:"reply_to"`
	Expiration      string    `json:"expiration"`
	MessageID       string    `json:"message_id"`
	Timestamp       time.Time `json:"timestamp"`
	Type            string    `json:"type"`
	UserID          string    `json:"user_id"`
	AppID           string    `json:"app_id"`
}

// MarshalJSON writes a timestamp the message does not carry as null,
// not as the year 1: a figure nobody knows is never a value.
func (p Properties) MarshalJSON() ([]byte, error) {
	type plain Properties
	out := struct {
		plain
		Timestamp *time.Time `json:"timestamp"`
	}{plain: plain(p)}
	if !p.Timestamp.IsZero() {
		out.Timestamp = &p.Timestamp
	}
	return json.Marshal(out)
}
