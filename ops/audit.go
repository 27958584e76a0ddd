package ops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// AuditReader is the audit screen's view of the store: the operations,
// the chain's verdict, one operation opened, and the resume of one left
// incomplete.
type AuditReader struct{ o *Ops }

// Audit is the audit log as the dashboard reads it.
func (o *Ops) Audit() AuditReader { return AuditReader{o} }

// Operations returns the newest operations, oldest first. A damaged entry
// ends the reading there: the screen shows what is readable and the
// chain's verdict says what is wrong.
func (a AuditReader) Operations(ctx context.Context, limit int) ([]domain.OperationSummary, error) {
	var z audit.Summarizer
	if err := a.each(ctx, z.Add); err != nil {
		return nil, err
	}
	ops := z.Summaries()
	if len(ops) > limit {
		ops = ops[len(ops)-limit:]
	}
	return ops, nil
}

// records reads the records keep takes, up to a damaged entry.
func (a AuditReader) records(ctx context.Context, keep func(audit.Record) bool) ([]audit.Record, error) {
	var recs []audit.Record
	err := a.each(ctx, func(r audit.Record) {
		if keep(r) {
			recs = append(recs, r)
		}
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// each gives fn every record, up to a damaged entry.
func (a AuditReader) each(ctx context.Context, fn func(audit.Record)) error {
	st, err := a.o.AuditStore()
	if err != nil {
		return err
	}
	err = st.Scan(ctx, func(r audit.Record) error {
		fn(r)
		return nil
	})
	var ce *audit.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return err
	}
	return nil
}

// Chain is the verdict on the whole chain, with how many operations its
// intact records belong to.
type Chain struct {
	domain.AuditResult
	Operations int
}

// Verify walks the whole chain.
func (a AuditReader) Verify(ctx context.Context) (Chain, error) {
	st, err := a.o.AuditStore()
	if err != nil {
		return Chain{}, err
	}
	c := &countingStore{Store: st, ops: map[string]struct{}{}}
	res, err := audit.Verify(ctx, c)
	return Chain{AuditResult: res, Operations: len(c.ops)}, err
}

// countingStore counts the operations of the records a scan's caller
// accepts, so one walk gives both the verdict and the count.
type countingStore struct {
	audit.Store
	ops map[string]struct{}
}

func (c *countingStore) Scan(ctx context.Context, fn func(audit.Record) error) error {
	return c.Store.Scan(ctx, func(r audit.Record) error {
		if err := fn(r); err != nil {
			return err
		}
		if r.Operation != "" {
			c.ops[r.Operation] = struct{}{}
		}
		return nil
	})
}

// Describe names the store, or says it could not be opened.
func (a AuditReader) Describe() string {
	st, err := a.o.AuditStore()
	if err != nil {
		return "audit store unavailable"
	}
	return st.Describe()
}

// OperationDetail is one operation as the audit screen opens it: who,
// where, the rule it followed, and what became of each message.
type OperationDetail struct {
	domain.OperationSummary
	Host, Context string
	// Rule is what the intent record states: filter, reason, parking
	// queue, rate, limit, whether it walked the whole queue (its intent
	// record says "streamed"; docs/ARCHITECTURE.md §4.4).
	Filter, Reason, Parking string
	Rate                    string
	Walk                    bool
	Destinations            []string
	Bytes                   int64
	// FileSHA256 is the file an export wrote or an import read, by its
	// sha256; "" for an operation on queues alone.
	FileSHA256 string
	// Resumes counts the times `dlq resume` took the operation up.
	Resumes int
	// Final is the final record's detail: counts, and cancelled or error
	// when the run was stopped or failed; nil while incomplete.
	Final map[string]string
	// Messages are in the order the log first names them.
	Messages []MessageEntry
}

// MessageEntry is one message of an operation: its IDs and the outcome
// its latest record gives, with that record's seq.
type MessageEntry struct {
	Seq       int64
	LogicalID string
	MessageID string
	// Outcome is one of audit.MessageOutcomes, or, when no outcome was
	// recorded, audit.OutcomePublishing (it may have been published: a
	// possible duplicate) or audit.OutcomeIntent (selected, not moved).
	Outcome string
}

// Operation reads every record of operation id.
func (a AuditReader) Operation(ctx context.Context, id string) (*OperationDetail, error) {
	recs, err := a.records(ctx, func(r audit.Record) bool { return r.Operation == id })
	if err != nil {
		return nil, err
	}
	sums := audit.Summaries(recs)
	if len(sums) == 0 {
		return nil, fmt.Errorf("no operation %s in the audit log (%s)", id, a.Describe())
	}
	return detailOf(sums[0], recs), nil
}

// detailOf gathers what the records of one operation say. A message named
// by an intent or publishing record waits for its outcome record, which
// settles it in place; a resume that names a waiting message again keeps
// its one row. An outcome for a message not waiting (a skipped one, a
// removed twin) adds a row.
func detailOf(s domain.OperationSummary, recs []audit.Record) *OperationDetail {
	d := &OperationDetail{OperationSummary: s}
	type name struct{ mid, lid string }
	waiting := map[name][]int{}
	add := func(r audit.Record, settle bool) {
		again := map[name]int{} // occurrences of a name in r so far
		for i := range max(len(r.MessageIDs), len(r.LogicalIDs)) {
			n := name{at(r.MessageIDs, i), at(r.LogicalIDs, i)}
			q := waiting[n]
			switch {
			case settle && len(q) > 0:
				e := &d.Messages[q[0]]
				e.Seq, e.Outcome = r.Seq, r.Outcome
				waiting[n] = q[1:]
			case !settle && again[n] < len(q):
				e := &d.Messages[q[again[n]]]
				e.Seq, e.Outcome = r.Seq, r.Outcome
				again[n]++
			default:
				if !settle {
					waiting[n] = append(q, len(d.Messages))
					again[n]++
				}
				d.Messages = append(d.Messages, MessageEntry{Seq: r.Seq, MessageID: n.mid, LogicalID: n.lid, Outcome: r.Outcome})
			}
		}
	}
	intended := false
	for _, r := range recs {
		switch r.Outcome {
		case domain.OutcomeIntent:
			intended = true
			d.Host, d.Context = r.Host, r.Context
			x := r.Detail
			d.Filter, d.Reason, d.Parking, d.Rate = x["filter"], x["reason"], x["parking_queue"], x["rate"]
			d.Walk = x["streamed"] == "true"
			d.Destinations = audit.Destinations(x)
			d.Bytes, _ = strconv.ParseInt(x["bytes"], 10, 64)
			d.FileSHA256 = x["file_sha256"]
			add(r, false)
		case domain.OutcomePublishing:
			add(r, false)
		case domain.OutcomeResumed:
			d.Resumes++
		case domain.OutcomeFinal:
			d.Final = r.Detail
			if !intended {
				// An operation of one record (an export): its final
				// says what an intent would have.
				x := r.Detail
				d.Host, d.Context, d.Filter, d.FileSHA256 = r.Host, r.Context, x["filter"], x["file_sha256"]
				d.Bytes, _ = strconv.ParseInt(x["bytes"], 10, 64)
			}
		default:
			add(r, true)
		}
	}
	return d
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return ""
}

// planResume reads what finishing the incomplete operation s.Operation
// on s.Queue would do. Nothing is held. It refuses what every front end
// refuses: a stream, an operation that finished, is unknown or was on
// another queue, a log that does not verify.
func (o *Ops) planResume(ctx context.Context, s Scope) (*Plan, error) {
	t, err := o.Resolve(ctx, s.Queue)
	if err != nil {
		return nil, err
	}
	t.Opts.AllowLimitRisk = s.AllowRisk
	if t.Info.Type == domain.TypeStream {
		return nil, &actions.RequestError{Err: fmt.Errorf("%s is a stream: nothing was removed from it, so there is nothing to resume", sanitize.Text(s.Queue.Name))}
	}
	r, err := o.resumable(ctx, t, s.Operation)
	if err != nil {
		return nil, err
	}
	pre, err := o.previewResume(ctx, t, r)
	if err != nil {
		return nil, err
	}
	// A resume goes out as the operation was planned, with a fresh
	// canary unless the operator waives it.
	st := stagingOf(r.Staged)
	if s.NoCanary {
		st.Canary = 0
	}
	p := &Plan{
		Decided: true, Summary: resumeQuestion(r, pre), Selected: pre.Read, Publish: pre.Moving,
		SkippedApplied: pre.SkippedApplied, Bytes: pre.Bytes, Lines: pre.Lines(),
		Operation: r.Op.ID, Twins: resumeCount(r.Confirmed), Unconfirmed: resumeCount(r.Published),
		Depth: int(t.Info.Messages), Staging: st, CanStage: r.Op.Action == actions.ActionReplay,
	}
	p.run = func(ctx context.Context, progress func(Progress)) (Result, error) {
		return o.resume(ctx, t, r, p.Staging, progress)
	}
	if r.Halted != "" {
		p.Warnings = append(p.Warnings, "the operation halted "+sanitize.Text(r.Halted)+": its copies that died again are replayed too")
	}
	for _, g := range pre.Groups {
		p.Destinations = append(p.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return p, nil
}

func resumeCount(m map[actions.Twin]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// resumeQuestion is the prompt's question for finishing r, with what the
// preview of the DLQ as it holds now found: how many messages would be
// published and where, whether applied ones go too, the filter — the
// intent record's words, which a prompt must show, since resuming acts on
// them (docs/ARCHITECTURE.md §4.6).
func resumeQuestion(r *actions.Resumption, pre *actions.Preview) string {
	req := r.Request
	s := fmt.Sprintf("Resume %s %s on %s (started %s): remove up to %d twins of recorded confirms, then %s %d of the %d messages the DLQ holds now",
		r.Op.Action, r.Op.ID, r.Op.Queue, r.Started, resumeCount(r.Confirmed), r.Op.Action, pre.Moving, pre.Read)
	var dests []string
	for _, g := range pre.Groups {
		dests = append(dests, fmt.Sprintf("%d to %s", g.Count, g.Dest))
	}
	if len(dests) > 0 {
		s += " (" + strings.Join(dests, ", ") + ")"
	}
	if req.To != nil {
		s += fmt.Sprintf("; the operation named --to %s", req.To)
	}
	if req.FilterText != "" {
		s += fmt.Sprintf("; filter %s", req.FilterText)
	}
	switch {
	case req.Action != actions.ActionReplay:
	case req.IncludeApplied:
		s += "; messages the inbox reports applied go too (include-applied)"
	case !pre.InboxUnknown:
		s += "; applied messages are skipped"
		// Unknown, the notes below say none can be.
	}
	s += "?"
	var tail []string
	if n := resumeCount(r.Published); n > 0 {
		tail = append(tail, fmt.Sprintf("%d were recorded as going out with no confirm recorded (published, or never sent before the stop): they go again unless the inbox says applied, counted as possible duplicates", n))
	}
	if tail = append(tail, pre.Notes()...); len(tail) > 0 {
		s += " Note: " + strings.Join(tail, "; ") + "."
	}
	return s
}
