package domain

import "time"

// Failure kinds: the broker's reasons, and an exception a framework
// caught and wrote down (docs/ARCHITECTURE.md §4.12).
const (
	KindException = "exception"
	// KindSkipped is a message no consumer took (MassTransit's _skipped).
	KindSkipped = "skipped"
)

// Convention names, as `dlq ls --json` and the inspector give them.
const (
	ConventionBroker      = "broker"
	ConventionSpring      = "spring"
	ConventionMassTransit = "masstransit"
	ConventionNServiceBus = "nservicebus"
	ConventionEasyNetQ    = "easynetq"
	ConventionRascal      = "rascal"
	ConventionWatermill   = "watermill"
)

// Failure is what a message says about why and where it failed, read by
// the convention that wrote it: the broker's own dead-lettering or a
// framework's error queue (docs/ARCHITECTURE.md §4.12).
type Failure struct {
	// Convention is the name of the convention read; "" when the
	// message follows none.
	Convention string
	// Kind is rejected, expired, maxlen, delivery_limit or exception.
	Kind string
	// ErrorType is the exception's type; ErrorMessage its first line,
	// cut; StackTrace the whole trace, cut, kept for the inspector.
	ErrorType    string
	ErrorMessage string
	StackTrace   string
	// Attempts is the convention's own count of deliveries, 0 when it
	// keeps none.
	Attempts int
	// FailedAt is when the convention says it failed; zero if unknown.
	FailedAt time.Time
	// The origin: a queue, or an exchange with the routing key.
	OriginQueue      string
	OriginExchange   string
	OriginRoutingKey string
	// Missing names the fields the convention writes that this message
	// lacks or carries with the wrong type, so the inspector can say so.
	Missing []string
	// Also names other conventions whose headers the message carries
	// too; the first convention read wins.
	Also []string
	// Envelope is the message inside an envelope convention (EasyNetQ):
	// what is shown and replayed instead of the envelope; nil otherwise.
	Envelope *Enveloped
}

// Enveloped is the original message an envelope convention carries.
type Enveloped struct {
	Properties Properties
	Headers    map[string]any
	Body       []byte
}

// Origin is the failure's origin in one word: the queue, else
// exchange/key, else "".
func (f Failure) Origin() string {
	switch {
	case f.OriginQueue != "":
		return f.OriginQueue
	case f.OriginExchange != "" || f.OriginRoutingKey != "":
		return f.OriginExchange + "/" + f.OriginRoutingKey
	}
	return ""
}
