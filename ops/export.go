package ops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// Export reads a DLQ as `dlq export` takes it (docs/ARCHITECTURE.md
// §4.14): in order, without harm — a feed holds what it read and gives
// everything back at the end with one nack, as a preview does — within
// the byte budget, so a queue of any size passes through a window of
// bodies. Each letter the filter matches (nil: every one) goes to each,
// with its body, and is let go of once each returns.

// ExportScope is what an export reads.
type ExportScope struct {
	Queue     domain.QueueRef
	Filter    Filter // nil: every letter
	Limit     int    // 0: every message the queue holds when it starts
	AllowRisk bool
	// Begin, when set, is told the queue's target once it is known,
	// before the first letter: an error stops the export there.
	Begin func(*Target) error
}

// ExportResult is what an export read.
type ExportResult struct {
	Target  *Target
	Read    int
	Matched int
	// Unread is what the queue held, once the export had read what it
	// would (every message ready when it started, or the limit), that
	// the export did not read: ready messages (arrived, or given back by
	// another client, since it started) and deliveries that came past
	// the end. Consumers are the queue's consumers when the export
	// started, other clients', and Held the messages other clients held
	// unacknowledged then (domain.HeldElsewhere), which no reader sees.
	Unread, Consumers, Held int
	// PastLimit is Unread when Limit cut the export short: the queue held
	// more messages ready when it started than the limit took. 0 when the
	// export read every message ready at its start.
	PastLimit int
}

// Export reads s.Queue and hands each matching letter to each; an error
// from each stops the read. progress, when set, is told how many were
// read after every page.
func (o *Ops) Export(ctx context.Context, s ExportScope, each func(domain.DeadLetter) error, progress func(read int)) (ExportResult, error) {
	t, err := o.Resolve(ctx, s.Queue)
	if err != nil {
		return ExportResult{}, err
	}
	t.Opts.AllowLimitRisk = s.AllowRisk
	if t.Info.Type == domain.TypeStream {
		return ExportResult{Target: t}, errors.New(t.Ref.Name + " is a stream: export reads a queue by its deliveries, and a stream keeps its messages (read it with dlq ls)")
	}
	res := ExportResult{Target: t}
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	// Other clients' consumers are counted before the export's own come.
	feed, others, err := o.feedCounting(conn, t, s.Limit)
	if err != nil {
		return res, err
	}
	res.Consumers, res.Held = others.consumers, others.held
	// Everything read goes back, in order, however the export ends.
	defer feed.Close()
	if s.Begin != nil {
		if err := s.Begin(t); err != nil {
			return res, err
		}
	}
	for {
		letters, end, err := feed.Next(ctx, dlq.DefaultWindow)
		if err != nil {
			return res, err
		}
		feed.Keep(len(letters))
		res.Read += len(letters)
		var applied map[string]bool
		known := false
		if s.Filter != nil {
			applied, known, _ = o.Applied(ctx, t.InboxOf, letters)
		}
		for _, d := range letters {
			if s.Filter != nil {
				var a *bool
				if known && d.BusinessID() != "" {
					v := applied[d.BusinessID()]
					a = &v
				}
				ok, err := s.Filter.Match(d, a, o.c.Now())
				if err != nil || !ok {
					continue
				}
			}
			if err := each(d); err != nil {
				return res, err
			}
			res.Matched++
		}
		if progress != nil {
			progress(res.Read)
		}
		if end {
			ready, past, err := feed.Left()
			if err != nil {
				return res, err
			}
			res.Unread = ready + past
			if s.Limit > 0 && others.ready > s.Limit {
				res.PastLimit = res.Unread
			}
			return res, feed.Close()
		}
	}
}

// ActionExport is the audit log's name of an export.
const ActionExport = "export"

// ExportRecord is what the audit log keeps of an export that wrote its
// file: where the messages came from and went, how many, and the file's
// sha256, which an import of the file records too. The messages' IDs
// are in the file, which the sha256 names.
type ExportRecord struct {
	Queue       domain.QueueRef
	Output      string // the file's path, or "-" for stdout
	SHA256      string
	ExportID    string // the file header's ID (dlqfile.Header.ID)
	Read, Count int
	Bytes       int64
	Filter      string
}

// RecordExport writes an export into the audit log: one final record,
// operation and all, so that the log, `audit tail` and the audit screen
// show who took which dead letters off the broker, and when. An export
// moves no message, so nothing is written before it reads and nothing
// is left to resume. It returns the operation's ID.
func (o *Ops) RecordExport(ctx context.Context, e ExportRecord) (string, error) {
	st, err := o.AuditStore()
	if err != nil {
		return "", err
	}
	name := ""
	if o.c.Context != nil {
		name = o.c.Context.Name
	}
	target := e.Output
	if target == "-" {
		target = "stdout"
	} else if abs, err := filepath.Abs(e.Output); err == nil {
		target = abs
	}
	op := audit.Op{ID: audit.NewOperationID(), Action: ActionExport, Operator: o.c.Operator, Host: o.host, Context: name,
		Vhost: e.Queue.Vhost, Queue: e.Queue.Name, Target: target}
	rec := op.Final(map[string]int{domain.OutcomeExported: e.Count, "selected": e.Count, "read": e.Read})
	rec.Detail["bytes"] = strconv.FormatInt(e.Bytes, 10)
	rec.Detail["file_sha256"] = e.SHA256
	rec.Detail["export_id"] = e.ExportID
	if e.Filter != "" {
		rec.Detail["filter"] = e.Filter
	}
	if _, err := st.Append(ctx, rec); err != nil {
		return "", fmt.Errorf("%s: %w", st.Describe(), err)
	}
	return op.ID, nil
}
