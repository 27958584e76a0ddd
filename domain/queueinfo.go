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
