package actions

import (
	"context"
	"strconv"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// walkLog writes the records of one walk. Nothing is
// listed up front, since the selection is decided as the queue is read:
// each page's moving messages are recorded before they are published
// (outcome publishing), each batch of confirms before its acks, and the
// other outcomes as they come.
type walkLog struct {
	store audit.Store
	sign  *audit.SigningKey // nil: no checkpoint
	op    audit.Op
	// j, while the operation streams, writes the page and outcome
	// records in group commits.
	j *journal
}

// append stores rec: through the journal while there is one.
func (l *walkLog) append(ctx context.Context, rec audit.Record) error {
	if l.j != nil {
		return l.j.write(rec)
	}
	_, err := l.store.Append(context.WithoutCancel(ctx), rec)
	return err
}

func (l *walkLog) intent(ctx context.Context, op Walk, window int, declareParking bool) error {
	if r := op.Resume; r != nil {
		// The intent stands; this says the operation goes on.
		detail := map[string]string{
			"limit": strconv.Itoa(op.Limit), "twins": strconv.Itoa(sum(r.Confirmed)), "unconfirmed": strconv.Itoa(sum(r.Published)),
		}
		for k, v := range op.Staged {
			detail[k] = v
		}
		_, err := l.store.Append(ctx, l.op.Outcome(domain.OutcomeResumed, nil, nil, detail))
		return err
	}
	req := op.Request
	p := &Plan{Action: req.Action, FilterText: req.FilterText, Parking: req.Parking, Reason: req.Reason,
		Rate: req.Rate, Release: req.Release}
	extra := intentDetail(p, window, declareParking)
	extra["limit"] = strconv.Itoa(op.Limit)
	extra["streamed"] = "true" // the record's key since the first release: a walk
	for k, v := range op.Staged {
		extra[k] = v
	}
	for k, v := range op.Detail {
		extra[k] = v
	}
	if req.IncludeApplied {
		extra["include_applied"] = "true"
	}
	if req.To != nil {
		extra["to"] = req.To.String()
	}
	dests := make([]string, len(op.Groups))
	var bytes int64
	for i, g := range op.Groups {
		dests[i] = g.Dest.Target()
		bytes += g.Bytes
	}
	_, err := l.store.Append(ctx, l.op.Intent(audit.Plan{Selected: op.Expect, Destinations: dests, Bytes: bytes, Extra: extra}))
	return err
}

// publishingRecord names a page's moving messages before any is
// published, so after a crash every copy that may exist is named.
// digests and deaths run parallel to items: their bodies' sha256 and
// their DeathDigest.
func (l *walkLog) publishingRecord(items []Item, digests, deaths []string) audit.Record {
	mids, lids, dests := make([]string, len(items)), make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		mids[i], lids[i] = it.Letter.MessageID, it.Letter.LogicalID
		dests[i] = it.Dest.Target()
	}
	detail := map[string]string{
		"body_sha256": jsonList(digests), "destinations": jsonList(dests), "x_death_sha256": jsonList(deaths),
	}
	runs := make([]string, len(items))
	for i, it := range items {
		runs[i] = runOf(it.Letter)
	}
	addRuns(detail, runs)
	return l.op.Outcome(domain.OutcomePublishing, mids, lids, detail)
}

// outcome records a batch of settled messages; replies run parallel to
// batch for returned ones.
func (l *walkLog) outcome(ctx context.Context, outcome string, batch []flight, replies []string) error {
	return l.append(ctx, l.outcomeRecord(outcome, batch, replies))
}

func (l *walkLog) outcomeRecord(outcome string, batch []flight, replies []string) audit.Record {
	mids, lids := make([]string, len(batch)), make([]string, len(batch))
	digests, sizes, dests, deaths := make([]string, len(batch)), make([]string, len(batch)), make([]string, len(batch)), make([]string, len(batch))
	for i, fl := range batch {
		mids[i], lids[i] = fl.messageID, fl.logicalID
		digests[i] = fl.digest
		sizes[i] = strconv.Itoa(fl.size)
		dests[i] = fl.dest.Target()
		deaths[i] = fl.death
	}
	detail := map[string]string{"body_sha256": jsonList(digests), "body_size": jsonList(sizes), "destinations": jsonList(dests), "x_death_sha256": jsonList(deaths)}
	runs := make([]string, len(batch))
	for i, fl := range batch {
		runs[i] = fl.run
	}
	addRuns(detail, runs)
	if outcome == domain.OutcomeReturned {
		detail["replies"] = jsonList(replies)
	}
	return l.op.Outcome(outcome, mids, lids, detail)
}

// final closes the operation with its counts; it is written after a
// cancel too.
func (l *walkLog) final(ctx context.Context, res *Result, runErr error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	return appendFinal(ctx, l.store, l.sign, l.op, res, finalRecord(l.op, res, runErr, map[string]int{
		"taken": res.Taken, "kept": res.Kept, "moved": res.Moved,
		domain.OutcomeDeduplicated: res.Deduplicated, "possible_duplicates": res.PossibleDuplicates,
		// What the walk chose to move, sent or not: a walk without a
		// preview knew only what it would read when it wrote its intent.
		"selected": res.Selected + res.NotSent,
	}))
}

// leaveOpen ends a run that leaves its operation open without a halt (an
// import interrupted): what was recorded publishing and never published
// is recorded not sent, so that finishing it does not count those as
// possibly published twice.
func (l *walkLog) leaveOpen(ctx context.Context, unsent []flight) error {
	return l.notSent(ctx, unsent)
}

// notSent records the messages recorded as publishing that never went
// out, as a run ends: without it they would read as published without a
// confirm, possibly at their destination.
func (l *walkLog) notSent(ctx context.Context, unsent []flight) error {
	if len(unsent) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	_, err := l.store.Append(ctx, l.outcomeRecord(domain.OutcomeNotSent, unsent, nil))
	return err
}

// stage records a stage's verdict as it is reached.
func (l *walkLog) stage(ctx context.Context, v domain.StageVerdict) error {
	return l.append(ctx, l.op.Outcome(domain.OutcomeStage, nil, nil, map[string]string{
		"stage": strconv.Itoa(v.Stage), "size": strconv.Itoa(v.Size), "applied": strconv.Itoa(v.Applied),
		"failed_again": strconv.Itoa(v.FailedAgain), "pending": strconv.Itoa(v.Pending), "verdict": v.Verdict, "why": v.Why,
	}))
}

// halted records a halt: the messages recorded as publishing that never
// went out, then the halt with its reason and counts. No final record:
// the operation stays open, and `dlq resume` takes it up.
func (l *walkLog) halted(ctx context.Context, res *Result, unsent []flight, h *HaltError) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if len(unsent) > 0 {
		if _, err := l.store.Append(ctx, l.outcomeRecord(domain.OutcomeNotSent, unsent, nil)); err != nil {
			return err
		}
	}
	detail := map[string]string{
		"reason": h.Reason, "stage": strconv.Itoa(h.Verdict.Stage),
		"failed_again": strconv.Itoa(h.Verdict.FailedAgain), "size": strconv.Itoa(h.Verdict.Size),
		"moved": strconv.Itoa(res.Moved), "kept": strconv.Itoa(res.Kept), "not_sent": strconv.Itoa(res.NotSent),
		"confirmed": strconv.Itoa(res.Confirmed),
	}
	rec, err := l.store.Append(ctx, l.op.Outcome(domain.OutcomeHalted, nil, nil, detail))
	if err == nil {
		// The halt is the operation's last record until a resume: its
		// head is what the operator keeps, as after a final.
		h := audit.HeadOf(rec)
		res.Head = &h
	}
	return err
}

// addRuns records the sources' runs (x-warren-run), parallel to the
// message IDs, when any source carries one: a twin is named by its run
// too (Twin.Run).
func addRuns(detail map[string]string, runs []string) {
	for _, r := range runs {
		if r != "" {
			detail["source_runs"] = jsonList(runs)
			return
		}
	}
}

func sum(m map[Twin]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
