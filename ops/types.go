package ops

import (
	"context"
	"errors"
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// Session holds a DLQ's messages unacknowledged while the operator looks.
type Session interface {
	// Next holds one more page.
	Next(ctx context.Context) (Page, error)
	// Letters are the letters held now: after an action, those that were
	// acted on are no longer held.
	Letters() []domain.DeadLetter
	// Done reports the session's end: nil after Close, the cause when the
	// channel or connection died.
	Done() <-chan error
	Close() error
}

// Page is one page of a browse.
type Page struct {
	Letters []domain.DeadLetter // newly held
	End     bool                // nothing more to browse
	// Depth is the queue's depth when the session opened; 0 when unknown.
	Depth int
	// Notes tell the operator what browsing implies (consumers on the
	// DLQ, order not kept, messages skipped near their delivery limit).
	Notes []string
}

// RefusedError says why browsing was refused and what may happen when the
// operator overrides it.
type RefusedError struct {
	Reason string // why browsing is refused
	Risk   string // what browsing anyway may do
}

func (e *RefusedError) Error() string { return e.Reason }

// ErrNoInbox means no inbox is configured for the queue.
var ErrNoInbox = errors.New("no inbox configured for this queue")

// Filter is a compiled filter expression.
type Filter interface {
	// Match evaluates the filter on d; applied is nil when the inbox
	// status is unknown.
	Match(d domain.DeadLetter, applied *bool, now time.Time) (bool, error)
}

// Action names an operation on dead letters.
type Action string

// Actions the screen offers.
const (
	Replay     Action = "replay"
	Quarantine Action = "quarantine"
)

// PlanRequest is what the operator asked for.
type PlanRequest struct {
	Action Action
	Queue  domain.QueueRef
	// Session holds the letters: the dashboard's Session, or the
	// command line's *Browse.
	Session any
	Letters []domain.DeadLetter
	Reason  string // quarantine reason
	// Whole asks for every message the queue holds rather than the held
	// letters: a preview reads the queue to plan, and the run streams
	// over the messages it held when the preview read it. Session and
	// Letters are then unused.
	Whole bool

	// What the command line adds: a filter over the letters, a
	// destination override, applied messages included, a rate limit.
	Filter         actions.Matcher
	FilterText     string
	To             *actions.Override
	IncludeApplied bool
	Rate           float64
}

// Plan is a dry run of an action, as the prompt shows it.
type Plan struct {
	Action Action
	// Summary is one sentence stating counts and destinations.
	Summary string
	// Selected is how many messages the operator picked; Publish is how
	// many the plan moves. The rest stay: already applied, quarantined,
	// or without a destination.
	Selected       int
	Publish        int
	SkippedApplied int
	Destinations   []Destination
	Bytes          int64
	Rate           float64 // messages per second; 0 means unlimited
	Warnings       []string
	// Lines detail the plan, one line per destination and skip.
	Lines []string
	// Diff is an edit's unified diff of headers and body (untrusted:
	// sanitise before showing it).
	Diff string
	// Handle is the implementation's own plan, passed back to Execute.
	Handle any
}

// Destination is where some of the messages go.
type Destination struct {
	Name  string // e.g. "queue orders" or "exchange orders / order.created"
	Count int
}

// Progress is an operation's figures so far.
type Progress struct {
	Total, Done                          int
	Published                            int
	Confirmed, Returned, Nacked, Unknown int
	// Finished is set on the last report.
	Finished bool
	At       time.Time
}

// Counts are an operation's figures, as the command line's JSON gives
// them.
type Counts = actions.Counts

// Result is how an operation ended: its figures, and the caveats the
// operator must read (copies that exist twice, properties dropped).
type Result struct {
	Counts
	Notes []string `json:"-"`
	// AuditHead is the audit log's head after the operation's last
	// record: the anchor for the ticket that `audit verify
	// --expect-head` checks. Nil when the final record was not written.
	AuditHead *audit.Head `json:"audit_head,omitempty"`
}
