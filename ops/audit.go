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
func (a AuditReader) Operations(ctx context.Context, limit int) ([]audit.OperationSummary, error) {
	recs, err := a.records(ctx, func(audit.Record) bool { return true })
	if err != nil {
		return nil, err
	}
	ops := audit.Summaries(recs)
	if len(ops) > limit {
		ops = ops[len(ops)-limit:]
	}
	return ops, nil
}

// records reads the records keep takes, up to a damaged entry.
func (a AuditReader) records(ctx context.Context, keep func(audit.Record) bool) ([]audit.Record, error) {
	st, err := a.o.AuditStore()
	if err != nil {
		return nil, err
	}
	var recs []audit.Record
	err = st.Scan(ctx, func(r audit.Record) error {
		if keep(r) {
			recs = append(recs, r)
		}
		return nil
	})
	var ce *audit.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	return recs, nil
}

// Chain is the verdict on the whole chain, with how many operations its
// intact records belong to.
type Chain struct {
	audit.Result
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
	return Chain{Result: res, Operations: len(c.ops)}, err
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
	audit.OperationSummary
	Host, Context string
	// Rule is what the intent record states: filter, reason, parking
	// queue, rate, limit, whether it streamed (docs/ARCHITECTURE.md §4.4).
	Filter, Reason, Parking string
	Rate                    string
	Streamed                bool
	Destinations            []string
	Bytes                   int64
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
func detailOf(s audit.OperationSummary, recs []audit.Record) *OperationDetail {
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
	for _, r := range recs {
		switch r.Outcome {
		case audit.OutcomeIntent:
			d.Host, d.Context = r.Host, r.Context
			x := r.Detail
			d.Filter, d.Reason, d.Parking, d.Rate = x["filter"], x["reason"], x["parking_queue"], x["rate"]
			d.Streamed = x["streamed"] == "true"
			d.Destinations = audit.Destinations(x)
			d.Bytes, _ = strconv.ParseInt(x["bytes"], 10, 64)
			add(r, false)
		case audit.OutcomePublishing:
			add(r, false)
		case audit.OutcomeResumed:
			d.Resumes++
		case audit.OutcomeFinal:
			d.Final = r.Detail
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

// ResumePlan is what resuming an incomplete operation would do, as the
// prompt asks it; Resume carries it out.
type ResumePlan struct {
	Operation string
	Queue     domain.QueueRef
	// Question is the prompt's sentence, worded as `dlq resume` words it.
	Question string
	// Twins are the recorded confirms whose sources may still be in the
	// DLQ; Unconfirmed the copies published without a recorded confirm.
	Twins, Unconfirmed int
	// Depth is how many messages the DLQ held when the plan was read:
	// the resume goes over what it holds when it starts.
	Depth int
	// Moving is how many of them the resume would publish, Destinations
	// where: what the type-to-confirm rule counts.
	Moving       int
	Destinations []Destination

	target *Target
	r      *actions.Resumption
}

// PlanResume reads what resuming operation id on vhost/queue would do.
// Nothing is held. It refuses what `dlq resume` refuses: a read-only
// context, a store that cannot be written, a stream, an operation that
// finished, is unknown or was on another queue.
func (a AuditReader) PlanResume(ctx context.Context, ref domain.QueueRef, id string) (*ResumePlan, error) {
	o := a.o
	if err := o.writable("resume"); err != nil {
		return nil, err
	}
	if err := o.CheckAudit(ctx); err != nil {
		return nil, err
	}
	t, err := o.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if t.Info.Type == domain.TypeStream {
		return nil, fmt.Errorf("%s is a stream: nothing was removed from it, so there is nothing to resume", ref.Name)
	}
	r, err := o.Resumable(ctx, t, id)
	if err != nil {
		return nil, err
	}
	pre, err := o.PreviewResume(ctx, t, r)
	if err != nil {
		return nil, guardRefusal(err)
	}
	twins, unconfirmed := resumeCount(r.Confirmed), resumeCount(r.Published)
	p := &ResumePlan{Operation: r.Op.ID, Queue: ref, Question: ResumeQuestion(r, pre), Twins: twins, Unconfirmed: unconfirmed,
		Depth: int(t.Info.Messages), Moving: pre.Moving, target: t, r: r}
	for _, g := range pre.Groups {
		p.Destinations = append(p.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return p, nil
}

// Resume finishes the planned operation, as `dlq resume` does; progress
// is called from the operation's goroutines.
func (a AuditReader) Resume(ctx context.Context, p *ResumePlan, progress func(Progress)) (Result, error) {
	if p == nil || p.r == nil {
		return Result{}, errors.New("resume: no plan (PlanResume makes one)")
	}
	return a.o.Resume(ctx, p.target, p.r, progress)
}

func resumeCount(m map[actions.Twin]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// ResumeQuestion is the prompt's question for finishing r, with what the
// preview of the DLQ as it holds now found: how many messages would be
// published and where, whether applied ones go too, the filter — the
// intent record's words, which a prompt must show, since resuming acts on
// them (docs/ARCHITECTURE.md §4.6).
func ResumeQuestion(r *actions.Resumption, pre *actions.Preview) string {
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
	if req.Action == actions.ActionReplay {
		if req.IncludeApplied {
			s += "; messages the inbox reports applied go too (include-applied)"
		} else {
			s += "; applied messages are skipped"
		}
	}
	s += "?"
	var tail []string
	if n := resumeCount(r.Published); n > 0 {
		tail = append(tail, fmt.Sprintf("%d were published without a recorded confirm: they go again unless the inbox says applied, as possible duplicates", n))
	}
	if tail = append(tail, pre.Notes()...); len(tail) > 0 {
		s += " " + strings.Join(tail, "; ")
	}
	return s
}

// ResumedText says what a resume did, in one line.
func ResumedText(res Result) string {
	return fmt.Sprintf("resumed %s: %d twins removed, %d published again (%d possible duplicates), %d confirmed, %d returned, %d nacked, %d unknown, %d skipped as applied",
		res.Operation, res.Deduplicated, res.Selected, res.PossibleDuplicates, res.Confirmed, res.Returned, res.Nacked, res.Unknown, res.SkippedApplied)
}
