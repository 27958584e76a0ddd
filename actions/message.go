package actions

import (
	"math"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Headers warren adds to the copies it publishes.
const (
	HeaderReplayCount = "x-warren-replay-count"
	HeaderReplayedAt  = "x-warren-replayed-at"
	HeaderOperation   = "x-warren-operation"
	// HeaderRun marks the copies of one run of a staged operation, so
	// a resume after a halt tells them from its own.
	HeaderRun              = "x-warren-run"
	HeaderQuarantineReason = "x-warren-quarantine-reason"
	HeaderQuarantineBy     = "x-warren-quarantine-by"
	HeaderQuarantineAt     = "x-warren-quarantine-at"
)

// stamp is what every copy of one operation is marked with.
type stamp struct {
	action    string
	operation string
	run       string // "" marks no run
	at        time.Time
	connUser  string // the user the publishing connection logged in as
	reason    string // quarantine only
	by        string // quarantine only
}

// copyOf is the publishing for one dead letter and what had to change.
type copyOf struct {
	msg               amqp.Publishing
	userIDDropped     string // the user_id the broker would have refused
	expirationDropped bool
}

// makeCopy rebuilds d for publishing: every property and header kept but
// the sender-selected routing headers CC and BCC, the body byte for byte,
// plus warren's headers. Two properties cannot always
// be kept:
//   - user_id: the broker refuses a publish whose user_id is not the
//     connection's user, so a foreign one is dropped (and reported);
//   - expiration: a per-message TTL counts from the publish, so resending
//     it would restart a deadline the producer set long ago. With a
//     timestamp, the copy gets the time left until that deadline; without
//     one, or once the deadline has passed, the expiration is dropped (and
//     reported) so the broker does not expire the copy at once.
//
// An envelope convention's letter (EasyNetQ) is replayed as the original
// message inside its envelope, and quarantined as the envelope, so the
// parking queue keeps the exception it carries.
func makeCopy(d domain.DeadLetter, s stamp) copyOf {
	if s.action == ActionImport {
		return exactCopy(d, s)
	}
	if r := d.Raw; r != nil && s.action == ActionQuarantine && r.Body != nil {
		d.Properties, d.Headers, d.Body, d.BodyDigest = r.Properties, r.Headers, r.Body, ""
	}
	p := d.Properties
	out := publishingOf(p, d.Body, s)
	if p.Expiration != "" {
		out.msg.Expiration = remainingTTL(p.Expiration, p.Timestamp, s.at)
		out.expirationDropped = out.msg.Expiration == ""
	}
	h := make(amqp.Table, len(d.Headers)+4)
	for k, v := range d.Headers {
		h[k] = v
	}
	delete(h, SeqHeader)
	// CC and BCC are routing instructions, not data: the broker sends a
	// message to their routing keys too, so a copy that kept rascal's
	// forward CC (or a publisher's) would reach queues that processed it
	// already (docs/ARCHITECTURE.md §4.12).
	delete(h, "CC")
	delete(h, "BCC")
	at := s.at.UTC().Format(time.RFC3339Nano)
	h[HeaderOperation] = s.operation
	delete(h, HeaderRun)
	if s.run != "" {
		h[HeaderRun] = s.run
	}
	switch s.action {
	case ActionQuarantine:
		h[HeaderQuarantineReason] = s.reason
		h[HeaderQuarantineBy] = s.by
		h[HeaderQuarantineAt] = at
		h[domain.HeaderQuarantineAttempts] = int64(d.Attempts)
	default:
		// A released message must not look quarantined at its origin, or
		// if it dies again it would be left out of every bulk replay.
		for k := range h {
			if strings.HasPrefix(k, "x-warren-quarantine-") {
				delete(h, k)
			}
		}
		h[HeaderReplayCount] = int64(d.ReplayCount + 1)
		h[HeaderReplayedAt] = at
		// What the copy failed before, for its attempt count if it
		// dies again (docs/ARCHITECTURE.md §2).
		h[domain.HeaderReplayAttempts] = int64(d.Attempts)
		h[domain.HeaderReplayDeaths] = carriedDeaths(d)
	}
	out.msg.Headers = h
	return out
}

// carriedDeaths sums, per queue, the x-death counts a copy of d
// carries: those of d's own x-death; when the copy is the original
// message a framework's envelope held, those of the x-death that
// original carried (the broker may have dead-lettered it before the
// framework took it), since a broker that goes on counting on a
// published x-death counts from them.
func carriedDeaths(d domain.DeadLetter) amqp.Table {
	t := amqp.Table{}
	deaths := d.Deaths
	if d.Raw != nil {
		deaths = domain.ParseDeaths(d.Headers)
	}
	for _, death := range deaths {
		n, _ := t[death.Queue].(int64)
		switch {
		case death.Count <= 0:
		case n > math.MaxInt64-death.Count:
			t[death.Queue] = int64(math.MaxInt64)
		default:
			t[death.Queue] = n + death.Count
		}
	}
	return t
}

// remainingTTL is what is left of a per-message TTL set at published, in
// the milliseconds the expiration property takes; "" when nothing is left
// or it cannot be known.
func remainingTTL(expiration string, published, now time.Time) string {
	ms, err := strconv.ParseInt(expiration, 10, 64)
	if err != nil || ms < 0 || published.IsZero() {
		return ""
	}
	left := published.Add(time.Duration(ms) * time.Millisecond).Sub(now).Milliseconds()
	if left <= 0 {
		return ""
	}
	return strconv.FormatInt(left, 10)
}

// exactCopy is an imported message as it was delivered when it was
// exported: every property, every header and the body as they are, and
// nothing of warren's, so an export imported again is the same message.
// Only a foreign user_id goes (the broker refuses it), and is reported.
func exactCopy(d domain.DeadLetter, s stamp) copyOf {
	out := publishingOf(d.Properties, d.Body, s)
	out.msg.Headers = amqp.Table(d.Headers)
	out.msg.Expiration = d.Properties.Expiration
	return out
}

// publishingOf is a publishing of body with properties p, but the
// expiration and the headers, which each kind of copy sets its own way; a
// user_id the broker would refuse (not the connection's user) is dropped
// and reported.
func publishingOf(p domain.Properties, body []byte, s stamp) copyOf {
	out := copyOf{msg: amqp.Publishing{
		ContentType:     p.ContentType,
		ContentEncoding: p.ContentEncoding,
		DeliveryMode:    p.DeliveryMode,
		Priority:        p.Priority,
		CorrelationId:   p.CorrelationID,
		ReplyTo:         p.ReplyTo,
		MessageId:       p.MessageID,
		Timestamp:       p.Timestamp,
		Type:            p.Type,
		AppId:           p.AppID,
		Body:            body,
	}}
	if p.UserID != "" {
		if p.UserID == s.connUser {
			out.msg.UserId = p.UserID
		} else {
			out.userIDDropped = p.UserID
		}
	}
	return out
}
