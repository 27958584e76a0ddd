package dlq

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Bounds that keep a scan's memory independent of the queue's size and
// of what hostile headers contain.
const (
	progressEvery = 1000
)

// Scan reads a whole DLQ for statistics and gives every message back:
// classic queues by closing the channel (free, order kept), quorum
// queues by one basic.nack with multiple, streams by offset. The quorum guard of
// Open applies. progress, if set, is called every thousand messages.
func Scan(ctx context.Context, conn *amqp.Connection, q domain.QueueInfo, o Options, progress func(done int)) (*domain.Stats, error) {
	return scan(ctx, conn, q, o, progress, nil)
}

// scan is Scan; afterRead, when set, is called once the scan's consumer
// is cancelled and before it asks what the queue holds beside.
func scan(ctx context.Context, conn *amqp.Connection, q domain.QueueInfo, o Options, progress func(done int), afterRead func()) (*domain.Stats, error) {
	if q.Type == "" {
		q.Type = domain.TypeClassic
	}
	o = o.withDefaults()
	if err := checkOpen(q, o); err != nil {
		return nil, err
	}
	start := time.Now()
	ch, depth, consumers, err := inspect(conn, q)
	if err != nil {
		return nil, err
	}
	consumers = max(consumers, q.Consumers) // as either counts them
	held := domain.HeldElsewhere(q, depth)
	defer ch.Close()
	stream := q.Type == domain.TypeStream
	if stream {
		// As in a browse, a stream is read to its idle tail.
		depth = -1
	}
	st := &domain.Stats{
		Queue: q, Expected: depth,
		Attempts: map[int]int{}, Reasons: map[string]int{}, Origins: map[string]int{},
		Groups: domain.NewGroups(o.GroupIDs), Conventions: map[string]int{},
		Held:  held,
		Notes: sessionNotes(q, consumers, held),
	}
	sc := &scanner{o: o, st: st, progress: progress, stream: stream, upTo: depth, afterRead: afterRead}
	if q.Type == domain.TypeQuorum && depth > MaxHeld {
		// Every message is held until the end, and a quorum queue lets
		// one consumer hold no more than its prefetch.
		sc.upTo = MaxHeld
	}
	if depth != 0 {
		if err := sc.run(ctx, ch, q); err != nil {
			return nil, err
		}
	}
	st.Complete = stream || st.Total >= depth
	switch {
	case st.Complete && st.Unread > 0:
		what := fmt.Sprintf("%d messages became ready after the scan started and are", st.Unread)
		if st.Unread == 1 {
			what = "1 message became ready after the scan started and is"
		}
		st.Notes = append(st.Notes, what+" not counted ("+domain.ReadyAfterStart+"): scan again for the whole queue")
	case st.Complete:
	case sc.upTo < depth && st.Total >= sc.upTo:
		st.Notes = append(st.Notes, fmt.Sprintf("read the first %d of the %d messages the queue held: a quorum queue lets one consumer hold at most %d unacknowledged, and a scan holds every message it reads until the end", st.Total, depth, MaxHeld))
	default:
		st.Notes = append(st.Notes, fmt.Sprintf("read %d of the %d messages the queue held at the start (consumers or expiry took the rest)", st.Total, depth))
	}
	st.Took = time.Since(start)
	if progress != nil {
		progress(st.Total)
	}
	return st, nil
}

type scanner struct {
	o        Options
	st       *domain.Stats
	progress func(int)
	stream   bool
	deaths   []domain.Death // reused for every message
	lastTag  uint64
	upTo     int // the scan ends once it has read this many (-1: a stream)
	closed   chan *amqp.Error
	waits    int // idle waits extended while messages were still ready
	// afterRead is called once the consumer is cancelled (tests).
	afterRead func()
}

// maxIdleWaits bounds how long a scan waits on messages the broker
// reports ready but does not deliver (a single active consumer elsewhere
// holds the queue, say): then it ends and says how many it read.
const maxIdleWaits = 30

func (sc *scanner) run(ctx context.Context, ch *amqp.Channel, q domain.QueueInfo) error {
	// Every message is held until the end, so a classic scan needs an
	// unlimited prefetch. A quorum queue reads an unlimited prefetch as
	// 2000 and stops there: it gets the largest one AMQP can express. A
	// stream only needs credit, granted by acknowledging as it goes.
	prefetch, args := 0, amqp.Table(nil)
	switch {
	case sc.stream:
		prefetch, args = min(sc.o.Window, MaxHeld), amqp.Table{domain.HeaderStreamOffset: "first"}
	case q.Type == domain.TypeQuorum:
		prefetch = MaxHeld
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return fmt.Errorf("set prefetch to scan %s: %w", q.Name, err)
	}
	sc.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	tag := "warren-scan-" + randomHex()
	deliveries, err := ch.Consume(q.Name, tag, false, false, false, false, args)
	if err != nil {
		return fmt.Errorf("scan %s: %w", q.Name, err)
	}
	err = sc.read(ctx, ch, deliveries)
	if cerr := ch.Cancel(tag, false); cerr != nil && err == nil {
		err = fmt.Errorf("stop scanning %s: %w", q.Name, cerr)
	}
	// What was in flight is counted too, but a stream's is not
	// acknowledged: the broker cannot take an ack for a cancelled stream
	// consumer.
	for d := range deliveries {
		if aerr := sc.add(ch, d, !sc.stream); aerr != nil && err == nil {
			err = aerr
		}
	}
	if sc.afterRead != nil {
		sc.afterRead()
	}
	if !sc.stream && err == nil {
		// What the queue holds ready now, beside what this channel
		// holds (asked before a quorum queue's are given back).
		info, derr := ch.QueueDeclarePassive(q.Name, false, false, false, false, nil)
		if derr != nil {
			return fmt.Errorf("read the depth of %s: %w", q.Name, derr)
		}
		sc.st.Unread = info.Messages
	}
	if q.Type == domain.TypeQuorum && sc.lastTag > 0 {
		// On 4.3+ a nack is free where a closing channel costs a count,
		// so the deliveries go back by a nack on every way out, a
		// cancelled scan included. Every delivery is still held, so one
		// nack with multiple returns them all: the broker settles one
		// requeue per delivery in quadratic time, a single multiple nack
		// at once.
		if nerr := ch.Nack(sc.lastTag, true, true); nerr != nil && err == nil {
			err = fmt.Errorf("return %d deliveries to %s: %w", sc.lastTag, q.Name, nerr)
		}
	}
	return err
}

func (sc *scanner) read(ctx context.Context, ch *amqp.Channel, deliveries <-chan amqp.Delivery) error {
	timer := time.NewTimer(3 * sc.o.Idle)
	defer timer.Stop()
	for sc.upTo < 0 || sc.st.Total < sc.upTo {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case d, ok := <-deliveries:
			if !ok {
				var reason *amqp.Error
				select {
				case reason = <-sc.closed:
				case <-time.After(time.Second):
				}
				return lossError("scan", sc.st.Queue.Name, reason)
			}
			if err := sc.add(ch, d, true); err != nil {
				return err
			}
			timer.Reset(sc.o.Idle)
		case <-timer.C:
			if sc.waits < maxIdleWaits && sc.stillReady(ch) {
				// A busy broker pauses; it has not run dry.
				sc.waits++
				timer.Reset(sc.o.Idle)
				continue
			}
			return nil
		}
	}
	return nil
}

// stillReady reports whether the queue still has ready messages for the
// scan after an idle wait: every message read is held, so any ready one
// has yet to come. A stream (read to its idle tail) and a queue that
// cannot be asked end the wait.
func (sc *scanner) stillReady(ch *amqp.Channel) bool {
	if sc.stream {
		return false
	}
	q, err := ch.QueueDeclarePassive(sc.st.Queue.Name, false, false, false, false, nil)
	return err == nil && q.Messages > 0
}

// add counts one message, decoding only the headers the figures need.
func (sc *scanner) add(ch *amqp.Channel, d amqp.Delivery, live bool) error {
	if sc.stream && live {
		if err := ch.Ack(d.DeliveryTag, false); err != nil {
			return fmt.Errorf("grant stream credit: %w", err)
		}
	}
	sc.lastTag = max(sc.lastTag, d.DeliveryTag)
	st := sc.st
	sc.deaths = domain.ParseDeathsInto(sc.deaths, d.Headers, false)
	org := findOrigin(sc.deaths, d.Headers)
	f := recognize(d, sc.deaths, org, sc.o.all, false)
	marks := markedHeaders(d.Headers, f)
	believed := sc.o.believed(d.Headers) && sc.o.believed(marks)
	// A replay count no known operation wrote counts no attempt.
	replays := 0
	if believed {
		replays = ReplayCount(marks)
	}
	n := sc.o.attempts(sc.deaths, org.Queue, marks, believed)
	reason, origin, at := org.Reason, org.Queue, diedAt(sc.deaths, marks, believed)
	if f.Convention == domain.ConventionBroker && f.Attempts > 0 {
		n = max(n, frameworkTries(sc.deaths, f, replaysAdded(replays, sc.o.CarriesDeaths)))
	}
	if f.Convention != "" && f.Convention != domain.ConventionBroker {
		reason, origin = f.Kind, f.Origin()
		n = max(n, clampInt(addSat(int64(f.Attempts), int64(replays))))
		if at.IsZero() {
			at = f.FailedAt
		}
	}
	st.Total++
	st.Bytes += int64(len(d.Body))
	st.Attempts[min(n, domain.MaxAttemptsKey)]++
	domain.Bump(st.Reasons, reason)
	domain.Bump(st.Origins, origin)
	domain.Bump(st.Conventions, f.Convention)
	var businessID string
	if sc.o.GroupIDs {
		id, from := LogicalID(sc.o.LogicalID, d.MessageId, d.Headers, d.Body)
		if e := f.Envelope; e != nil {
			id, from = LogicalID(sc.o.LogicalID, e.Properties.MessageID, e.Headers, e.Body)
		}
		if from != domain.IDHash {
			businessID = id
		}
	}
	st.Groups.Add(f, n, "", businessID)
	if believed {
		if replays > 0 {
			st.ReplayLoops++
		}
		if d.Headers[domain.HeaderQuarantineReason] != nil {
			st.Quarantined++
		}
	} else {
		st.MarksClaimed++
	}
	if t := at; t.IsZero() {
		st.NoTime++
	} else {
		if st.OldestDeadLettered.IsZero() || t.Before(st.OldestDeadLettered) {
			st.OldestDeadLettered = t
		}
		if t.After(st.NewestDeadLettered) {
			st.NewestDeadLettered = t
		}
	}
	if sc.progress != nil && st.Total%progressEvery == 0 {
		sc.progress(st.Total)
	}
	return nil
}
