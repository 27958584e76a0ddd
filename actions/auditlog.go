package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// idsPerRecord keeps outcome records a readable size; an operation on
// many messages writes several records per outcome.
const idsPerRecord = 256

// finishTimeout bounds the closing records, which are written even after
// the operation's context was cancelled.
const finishTimeout = 30 * time.Second

// auditLog writes the records of one operation (see package audit).
type auditLog struct {
	store  audit.Store
	sign   *audit.SigningKey // nil: no checkpoint
	op     audit.Op
	plan   *Plan
	stream bool
	// written marks the items whose outcome is recorded already.
	written map[int]bool
}

// confirmed records a batch of items whose copies were confirmed and whose
// source acks were proven, while the operation runs. A failure stops the
// operation: nothing more moves without its record.
func (l *auditLog) confirmed(ctx context.Context, outcomes []MessageOutcome, batch []int) error {
	recs := make([]MessageOutcome, len(batch))
	for i, item := range batch {
		recs[i] = outcomes[item]
	}
	if _, err := l.store.Append(context.WithoutCancel(ctx), l.outcomeRecord(Confirmed, recs)); err != nil {
		return fmt.Errorf("%w (%s): recording confirmed messages: %v", ErrAuditUnavailable, l.store.Describe(), err)
	}
	if l.written == nil {
		l.written = make(map[int]bool, len(l.plan.Items))
	}
	for _, item := range batch {
		l.written[item] = true
	}
	return nil
}

// intent writes the write-ahead record, listing every selected message so
// that even an operation killed mid-way names what it was moving, then the
// skipped-as-applied messages.
func (l *auditLog) intent(ctx context.Context, window int, declareParking bool) error {
	p := l.plan
	dests := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		dests[i] = g.Dest.Target()
	}
	extra := intentDetail(p, window, declareParking)
	extra["skipped_quarantined"] = strconv.Itoa(p.SkippedQuarantined)
	extra["no_destination"] = strconv.Itoa(p.NoDestination)
	if p.Unconfirmed > 0 {
		extra["destination_not_confirmed"] = strconv.Itoa(p.Unconfirmed)
	}
	extra["inbox"] = "known"
	if p.InboxUnknown {
		extra["inbox"] = "unknown"
	}
	if l.stream {
		extra["source"] = "stream: nothing is removed; offsets are recorded"
	}
	rec := l.op.Intent(audit.Plan{
		Selected: p.Selected(), Destinations: dests, Bytes: p.Bytes,
		SkippedApplied: len(p.SkippedApplied), Extra: extra,
	})
	letters := make([]domain.DeadLetter, len(p.Items))
	for i, it := range p.Items {
		letters[i] = it.Letter
	}
	rec.MessageIDs, rec.LogicalIDs = ids(letters)
	if _, err := l.store.Append(ctx, rec); err != nil {
		return err
	}
	for start := 0; start < len(p.SkippedApplied); start += idsPerRecord {
		chunk := p.SkippedApplied[start:min(start+idsPerRecord, len(p.SkippedApplied))]
		mids, lids := ids(chunk)
		if _, err := l.store.Append(ctx, l.op.Outcome(domain.OutcomeSkippedApplied, mids, lids, nil)); err != nil {
			return err
		}
	}
	return nil
}

// intentDetail is what every intent record says of the rule: the
// window, filter, rate, quarantine reason and parking queue, release.
func intentDetail(p *Plan, window int, declareParking bool) map[string]string {
	extra := map[string]string{"window": strconv.Itoa(window)}
	if p.FilterText != "" {
		extra["filter"] = p.FilterText
	}
	if p.Rate > 0 {
		extra["rate"] = strconv.FormatFloat(p.Rate, 'g', -1, 64)
	}
	if p.Action == ActionQuarantine {
		extra["reason"] = p.Reason
		extra["parking_queue"] = p.Parking
		if declareParking {
			extra["declare_parking_queue"] = "true"
		}
	}
	if p.Release {
		extra["release"] = "true"
	}
	if p.Action == ActionEdit && len(p.Items) == 1 {
		// The hashes of both bodies, never the bodies.
		it := p.Items[0]
		extra["body_sha256"] = audit.BodyDigest(it.Letter.Body)
		extra["edited_body_sha256"] = audit.BodyDigest(it.Edit.Body)
		extra["edited_body_size"] = strconv.Itoa(len(it.Edit.Body))
		extra["edited_headers"] = jsonList(slices.Sorted(maps.Keys(it.Edit.Headers)))
	}
	return extra
}

// finish writes the outcome records and the final record. It runs after
// a cancel too, so it does not use the operation's cancellation.
func (l *auditLog) finish(ctx context.Context, res *Result, runErr error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	byOutcome := map[Outcome][]MessageOutcome{}
	for _, o := range res.Outcomes {
		if !l.written[o.Item] {
			byOutcome[o.Outcome] = append(byOutcome[o.Outcome], o)
		}
	}
	for _, outcome := range []Outcome{Confirmed, Returned, Nacked, Unknown, NotSent} {
		all := byOutcome[outcome]
		for start := 0; start < len(all); start += idsPerRecord {
			if _, err := l.store.Append(ctx, l.outcomeRecord(outcome, all[start:min(start+idsPerRecord, len(all))])); err != nil {
				return err
			}
		}
	}
	return appendFinal(ctx, l.store, l.sign, l.op, res, finalRecord(l.op, res, runErr, nil))
}

// appendFinal stores an operation's final record, and a checkpoint
// signed with sign after it when there is a key, and keeps the head
// after the last of them in res.
func appendFinal(ctx context.Context, st audit.Store, sign *audit.SigningKey, op audit.Op, res *Result, final audit.Record) error {
	rec, err := st.Append(ctx, final)
	if err != nil {
		return err
	}
	h := audit.HeadOf(rec)
	res.Head = &h
	if sign == nil {
		return nil
	}
	cp, err := audit.AppendCheckpoint(ctx, st, sign, op)
	if err != nil {
		return fmt.Errorf("the operation is recorded, but its signed checkpoint is not: %w", err)
	}
	after := audit.HeadOf(cp)
	res.Head = &after
	return nil
}

// finalRecord closes an operation with its count per outcome, more
// counts, and whether it was cancelled or failed.
func finalRecord(op audit.Op, res *Result, runErr error, more map[string]int) audit.Record {
	counts := map[string]int{
		domain.OutcomeConfirmed: res.Confirmed, domain.OutcomeReturned: res.Returned,
		domain.OutcomeNacked: res.Nacked, domain.OutcomeUnknown: res.Unknown,
		string(NotSent): res.NotSent, domain.OutcomeSkippedApplied: res.SkippedApplied,
		"source_ack_failed": res.AckFailed, "user_id_dropped": res.UserIDDropped,
		"expiration_dropped": res.ExpirationDropped, "peak_in_flight": res.PeakInFlight,
	}
	for k, n := range more {
		counts[k] = n
	}
	final := op.Final(counts)
	if res.Cancelled {
		final.Detail["cancelled"] = "true"
	}
	if runErr != nil {
		final.Detail["error"] = runErr.Error()
	}
	return final
}

// outcomeRecord describes a batch of messages with one outcome; its
// detail arrays run parallel to message_ids.
func (l *auditLog) outcomeRecord(outcome Outcome, batch []MessageOutcome) audit.Record {
	letters := make([]domain.DeadLetter, len(batch))
	var (
		digests, sizes, dests, replies, offsets, users, ackFailed []string
		edited                                                    []string
		expDropped                                                int
		firstErr                                                  string
	)
	anyUser := false
	for i, o := range batch {
		it := l.plan.Items[o.Item]
		d := it.Letter
		letters[i] = d
		digests = append(digests, audit.BodyDigest(d.Body))
		sizes = append(sizes, strconv.Itoa(len(d.Body)))
		if it.Edit != nil {
			edited = append(edited, audit.BodyDigest(it.Edit.Body))
		}
		dests = append(dests, it.Dest.Target())
		replies = append(replies, o.Reply)
		offsets = append(offsets, strconv.FormatInt(d.Offset, 10))
		users = append(users, o.UserIDDropped)
		anyUser = anyUser || o.UserIDDropped != ""
		if o.ExpDropped {
			expDropped++
		}
		if o.AckErr != nil {
			ackFailed = append(ackFailed, d.LogicalID)
		}
		if o.Err != nil && firstErr == "" {
			firstErr = o.Err.Error()
		}
	}
	detail := map[string]string{"body_sha256": jsonList(digests), "body_size": jsonList(sizes)}
	if len(edited) > 0 {
		detail["edited_body_sha256"] = jsonList(edited)
	}
	if len(l.plan.Groups) > 1 {
		detail["destinations"] = jsonList(dests)
	}
	if outcome == Returned {
		detail["replies"] = jsonList(replies)
	}
	if firstErr != "" {
		detail["error"] = firstErr
	}
	if l.stream {
		detail["offsets"] = jsonList(offsets)
	}
	if anyUser {
		detail["user_id_dropped"] = jsonList(users)
	}
	if expDropped > 0 {
		detail["expiration_dropped"] = strconv.Itoa(expDropped)
	}
	if len(ackFailed) > 0 {
		detail["source_ack_failed"] = jsonList(ackFailed)
	}
	mids, lids := ids(letters)
	return l.op.Outcome(string(outcome), mids, lids, detail)
}

func ids(letters []domain.DeadLetter) (messageIDs, logicalIDs []string) {
	messageIDs = make([]string, len(letters))
	logicalIDs = make([]string, len(letters))
	for i, d := range letters {
		messageIDs[i], logicalIDs[i] = d.MessageID, d.LogicalID
	}
	return messageIDs, logicalIDs
}

func jsonList(v []string) string {
	b, _ := json.Marshal(v) // a []string always encodes
	return string(b)
}
