package domain

import (
	"fmt"
	"time"
)

// Queue types as the management API names them.
const (
	TypeClassic = "classic"
	TypeQuorum  = "quorum"
	TypeStream  = "stream"
)

// QueueInfo is what reading a DLQ needs to know about it, from the
// management API.
type QueueInfo struct {
	Vhost, Name, Type string
	// DeliveryLimit is the quorum delivery limit in force (set, or the
	// 4.0+ default), -1 for none.
	DeliveryLimit int64
	BrokerVersion string
	Consumers     int
	Messages      int64
	// Unacked is how many of Messages were delivered to a client and not
	// acknowledged, as the management API counted them (up to its
	// statistics interval old): HeldElsewhere tells who holds them.
	Unacked int64
	// MessageTTL is the queue's message TTL (argument or policy), nil
	// for none; HasDLX says whether expired messages are dead-lettered
	// rather than dropped.
	MessageTTL *time.Duration
	HasDLX     bool
}

// RefusedError says why warren will not read a queue, and what reading it
// anyway would risk: the one refusal every front end maps (a guard's
// refusal, exit code 3 on the command line, a question on the screen).
type RefusedError struct {
	Queue  QueueInfo
	Reason string
	// Risk is what the operator accepts by overriding the refusal.
	Risk string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refusing to browse %s in vhost %s: %s", e.Queue.Name, e.Queue.Vhost, e.Reason)
}

// HeldElsewhere is how many messages of q another client holds
// delivered and unacknowledged, which a reader that finds ready messages
// of q cannot see: a consumer's, or a browse's (warren's DLQ screen
// holds what it shows). ready is the queue's ready count now, from a
// passive declare. The management API's figures can be a statistics
// interval old, so only what they still explain counts: messages it
// counted unacknowledged that the queue does not hold ready now. Held
// messages given back since are ready again and count nothing; messages
// acknowledged within that interval can still count, and the words that
// go with the figure say so (HeldNote).
func HeldElsewhere(q QueueInfo, ready int) int {
	if q.Type == TypeStream || q.Unacked <= 0 {
		return 0
	}
	return int(max(min(q.Unacked, q.Messages-int64(ready)), 0))
}

// HeldNote says what n held messages are, for a reader that could not
// see them (HeldElsewhere).
func HeldNote(n int) string {
	what := fmt.Sprintf("%d messages are", n)
	if n == 1 {
		what = "1 message is"
	}
	return what + " held unacknowledged by another client (a consumer, or a browse such as warren's DLQ screen; the management API's count, a few seconds old at most): no reader sees them until that client gives them back"
}
