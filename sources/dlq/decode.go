package dlq

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// DefaultWindow is how many messages a browse page holds.
const DefaultWindow = 500

// defaultIdle is how long a page waits for one more delivery before it
// concludes the queue has nothing more to give.
const defaultIdle = time.Second

// Options say how to read one DLQ.
type Options struct {
	// Window is the page size, DefaultWindow when zero.
	Window int
	// LogicalID is the ID source: "", message_id, header:NAME, json:PATH.
	LogicalID string
	// AttemptsHeader is the application's own attempt counter, if any.
	AttemptsHeader string
	// AllowLimitRisk is the operator's knowing override of the quorum
	// delivery-limit guard.
	AllowLimitRisk bool
	// QuarantineQueue is the DLQ's parking queue (for the actions).
	QuarantineQueue string
	// OriginDeliveryLimits are the delivery limits of quorum origin
	// queues by name: a delivery_limit death there stands for limit+1
	// deliveries, which the x-death count alone does not show.
	OriginDeliveryLimits map[string]int64
	// CarriesDeaths says the broker goes on counting on the x-death a
	// publisher sets (domain.CarriesPublishedDeaths: before RabbitMQ 3.13,
	// and 3.13.3 on in 3.13), so a replayed copy that dies again counts
	// its earlier deaths in x-death too.
	CarriesDeaths bool
	// Conventions are the team's own error-header conventions, tried
	// after the broker's and before the frameworks' (Builtin).
	Conventions []Convention
	// GroupIDs keeps each failure group's business IDs in a scan, for
	// the inbox's applied and pending counts.
	GroupIDs bool
	// KnownOperation reports whether the audit log knows an operation:
	// warren's marks (quarantined, replayed n times) are believed only on
	// a message whose x-warren-operation it knows; nil believes them.
	KnownOperation func(id string) bool
	// all is Conventions then Builtin, set by withDefaults.
	all *conventionSet
	// StartOffset is where a stream browse starts; 0 means the first
	// message still in the stream.
	StartOffset int64
	// Idle is how long a page waits for another delivery before ending
	// early; defaultIdle when zero.
	Idle time.Duration
	// ByteBudget bounds the bodies a page asks the broker for at once:
	// the prefetch is cut to what the messages read so far say fits
	// (one message while none was read). DefaultByteBudget when zero.
	ByteBudget int64
	// ConsumerTimeout is how long the broker lets a delivery go
	// unacknowledged before it takes the session's messages back (and
	// closes its channel); 0 knows of none. TimeoutWhy says where it
	// comes from. AskTimeout, when set, is asked of the broker for each
	// page's consumer (x-consumer-timeout, which RabbitMQ 4.3 takes in
	// place of the queue's and the broker's) and is the timeout then
	// (docs/ARCHITECTURE.md §4.3).
	ConsumerTimeout time.Duration
	TimeoutWhy      string
	AskTimeout      time.Duration
	// KeepBody says which letters keep their body once decoded (their
	// size, logical ID and failure are read first); nil keeps every
	// body. A listing keeps none; dlq show only the message it shows.
	KeepBody func(domain.DeadLetter) bool
	// MaxChannels is the most channels a feed reads on; 0 leaves it to
	// the connection's channel-max. A user whose max-channels limit
	// leaves little room gets 1: the broker closes the whole connection
	// of a channel opened past the limit.
	MaxChannels int
}

// DefaultByteBudget is the bodies one page may ask for at once.
const DefaultByteBudget = 64 << 20

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Idle <= 0 {
		o.Idle = defaultIdle
	}
	if o.ByteBudget <= 0 {
		o.ByteBudget = DefaultByteBudget
	}
	if o.all == nil {
		o.all = builtinSet
		if len(o.Conventions) > 0 {
			o.all = newConventionSet(append(append([]Convention(nil), o.Conventions...), builtin...))
		}
	}
	return o
}

// Decode turns a delivery into a dead letter. It is pure: the session
// fills Position and Headroom, which depend on the browse. Without
// keepBody only the body's size is kept.
func Decode(d amqp.Delivery, o Options, keepBody bool) domain.DeadLetter {
	deaths := ParseDeaths(d.Headers)
	org := findOrigin(deaths, d.Headers)
	f := recognize(d, deaths, org, o.withDefaults().all, true)
	marks := markedHeaders(d.Headers, f)
	dl := domain.DeadLetter{
		DeliveryTag:    d.DeliveryTag,
		Redelivered:    d.Redelivered,
		MessageID:      d.MessageId,
		Reason:         org.Reason,
		OriginQueue:    org.Queue,
		OriginExchange: org.Exchange,
		RoutingKeys:    org.RoutingKeys,
		ReplayCount:    ReplayCount(marks),
		Deaths:         deaths,
		Size:           len(d.Body),
		Quarantined:    d.Headers[domain.HeaderQuarantineReason] != nil,
		DeliveryCount:  -1,
		AcquiredCount:  -1,
		Headroom:       -1,
		Properties:     properties(d),
		Headers:        d.Headers,
		Failure:        f,
	}
	// The envelope's own marks (a quarantine's) are judged too.
	believed := o.believed(d.Headers) && o.believed(marks)
	dl.Attempts = o.attempts(deaths, org.Queue, marks, believed)
	dl.DeadLetteredAt = diedAt(deaths, marks, believed)
	if !believed {
		// Marks a publisher wrote: shown as the message's claim, and
		// nothing warren does depends on them.
		dl.MarksClaimed, dl.ClaimedReplays, dl.ReplayCount, dl.Quarantined = true, dl.ReplayCount, 0, false
	}
	applyFailure(&dl, &d, o.CarriesDeaths)
	if n, ok := domain.ValueInt(d.Headers[domain.HeaderDeliveryCount]); ok && n >= 0 {
		dl.DeliveryCount = n
	}
	if n, ok := domain.ValueInt(d.Headers[domain.HeaderAcquiredCount]); ok && n >= 0 {
		dl.AcquiredCount = n
	}
	if n, ok := domain.ValueInt(d.Headers[domain.HeaderStreamOffset]); ok {
		dl.Offset = n
	}
	dl.LogicalID, dl.LogicalIDFrom = LogicalID(o.LogicalID, d.MessageId, d.Headers, d.Body)
	if keepBody {
		dl.Body = d.Body
	} else if dl.Raw != nil {
		dl.Raw.Body = nil
	}
	return dl
}

// markedHeaders are the headers warren's replay marks are read from: the
// message's own, or, for a framework that wraps a failed message in an
// envelope (EasyNetQ), the original message's inside it when the
// envelope carries none. warren replays that original with its marks,
// and when it fails again the framework wraps it, marks and all; a
// quarantine parks the envelope, marking the envelope itself.
func markedHeaders(h amqp.Table, f domain.Failure) amqp.Table {
	if e := f.Envelope; e != nil && !replayMarked(h) {
		return e.Headers
	}
	return h
}

// replayMarked reports whether h carries the marks of a replay.
func replayMarked(h amqp.Table) bool {
	for _, k := range []string{domain.HeaderReplayCount, domain.HeaderReplayAttempts, domain.HeaderReplayDeaths, domain.HeaderReplayedAt} {
		if h[k] != nil {
			return true
		}
	}
	return false
}

// applyFailure carries what a framework's convention says into the
// letter's broker-shaped fields, where the broker said nothing: reason,
// origin, attempts and time; an envelope's original message becomes the
// message shown and replayed.
func applyFailure(dl *domain.DeadLetter, d *amqp.Delivery, carries bool) {
	f := dl.Failure
	dl.Group = domain.GroupOf(f)
	if f.Convention == domain.ConventionBroker && f.Attempts > 0 {
		// Tries a framework recovered from before the broker
		// dead-lettered the message, beside those x-death counts (which
		// count the deaths before a replay too on a broker that
		// carries them).
		dl.Attempts = max(dl.Attempts, frameworkTries(dl.Deaths, f, replaysAdded(dl.ReplayCount, carries)))
	}
	if f.Convention == "" || f.Convention == domain.ConventionBroker {
		return
	}
	dl.Reason = f.Kind
	dl.OriginQueue = f.OriginQueue
	dl.OriginExchange = f.OriginExchange
	if f.OriginRoutingKey != "" {
		dl.RoutingKeys = []string{f.OriginRoutingKey}
	}
	if n := clampInt(addSat(int64(f.Attempts), int64(dl.ReplayCount))); n > dl.Attempts {
		dl.Attempts = n
	}
	if dl.DeadLetteredAt.IsZero() {
		dl.DeadLetteredAt = f.FailedAt
	}
	if e := f.Envelope; e != nil {
		dl.Raw = &domain.Enveloped{Properties: dl.Properties, Headers: d.Headers, Body: d.Body}
		dl.Properties, dl.Headers = e.Properties, e.Headers
		dl.MessageID = e.Properties.MessageID
		d.Body, d.MessageId, d.Headers = e.Body, e.Properties.MessageID, e.Headers
		dl.Size = len(e.Body)
	}
}

// replaysAdded is what warren's replays add to x-death's counts: one
// death each where the broker starts x-death afresh, none where it goes
// on counting on the x-death a copy carried.
func replaysAdded(replays int, carries bool) int {
	if carries {
		return 0
	}
	return replays
}

// frameworkTries adds the tries a framework counted to the deaths x-death
// counts at the origin, and warren's replays.
func frameworkTries(deaths []domain.Death, f domain.Failure, replays int) int {
	var n int64
	for _, d := range deaths {
		if d.Queue == f.OriginQueue {
			n = addSat(n, d.Count)
		}
	}
	return clampInt(addSat(addSat(n, int64(f.Attempts)), int64(replays)))
}

func mulSat(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

func properties(d amqp.Delivery) domain.Properties {
	return domain.Properties{
		ContentType:     d.ContentType,
		ContentEncoding: d.ContentEncoding,
		DeliveryMode:    d.DeliveryMode,
		Priority:        d.Priority,
		CorrelationID:   d.CorrelationId,
		ReplyTo:         d.ReplyTo,
		Expiration:      d.Expiration,
		MessageID:       d.MessageId,
		Timestamp:       d.Timestamp,
		Type:            d.Type,
		UserID:          d.UserId,
		AppID:           d.AppId,
	}
}
