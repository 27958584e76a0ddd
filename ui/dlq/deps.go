package dlq

import (
	"context"
	"errors"
	"time"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
)

// Deps are the services the DLQ screen works through. Tests pass fakes;
// ui/live implements them with the real packages.
type Deps struct {
	Browser Browser
	// Inbox may be nil: inbox columns then read "unknown".
	Inbox InboxLookup
	// Actions may be nil in a read-only context.
	Actions Actions
	// CompileFilter turns a filter expression (DESIGN.md §5) into a Filter.
	CompileFilter func(src string) (Filter, error)
	// Scanner may be nil: whole-queue statistics are then unavailable.
	Scanner Scanner
}

// Scanner reads a whole DLQ for statistics, keeping counters, never
// bodies.
type Scanner interface {
	// Scan counts every message the queue holds but this screen's
	// session does not, and gives them all back; progress is called now
	// and then with how many were read. Where reading could cost
	// messages (a quorum DLQ whose delivery limit counts returns) it
	// fails with a *RefusedError.
	Scan(ctx context.Context, queue mgmt.QueueRef, progress func(read int)) (*dlq.Stats, error)
}

// Browser opens browse sessions on a DLQ.
type Browser interface {
	// Open starts a session. Where browsing could cost messages (a quorum
	// DLQ with a delivery limit) it fails with a *RefusedError unless
	// allowRisk is true.
	Open(ctx context.Context, queue mgmt.QueueRef, allowRisk bool) (Session, error)
}

// Session holds a DLQ's messages unacknowledged while the operator looks.
type Session interface {
	// Next holds one more page.
	Next(ctx context.Context) (Page, error)
	// Letters are the letters held now: after an action, those that were
	// acted on are no longer held.
	Letters() []dlq.DeadLetter
	// Done reports the session's end: nil after Close, the cause when the
	// channel or connection died.
	Done() <-chan error
	Close() error
}

// Page is one page of a browse.
type Page struct {
	Letters []dlq.DeadLetter // newly held
	End     bool             // nothing more to browse
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

// InboxLookup finds which logical IDs a consumer already applied.
type InboxLookup interface {
	// Lookup returns the applied IDs with the time they were applied (zero
	// when the inbox has no time column); an absent ID is pending. It
	// fails with ErrNoInbox when the queue has no inbox configured.
	Lookup(ctx context.Context, queue mgmt.QueueRef, logicalIDs []string) (map[string]time.Time, error)
}

// ErrNoInbox means no inbox is configured for the queue.
var ErrNoInbox = errors.New("no inbox configured for this queue")

// Filter is a compiled filter expression.
type Filter interface {
	// Match evaluates the filter on d; applied is nil when the inbox
	// status is unknown.
	Match(d dlq.DeadLetter, applied *bool, now time.Time) (bool, error)
}

// Action names an operation on dead letters.
type Action string

// Actions the screen offers.
const (
	Replay     Action = "replay"
	Quarantine Action = "quarantine"
)

// Actions plans and executes replay and quarantine.
type Actions interface {
	Plan(ctx context.Context, req PlanRequest) (Plan, error)
	// Execute runs a confirmed plan and reports progress as it goes;
	// progress is called from Execute's goroutine.
	Execute(ctx context.Context, plan Plan, progress func(Progress)) (Result, error)
}

// PlanRequest is what the operator asked for.
type PlanRequest struct {
	Action  Action
	Queue   mgmt.QueueRef
	Session Session
	Letters []dlq.DeadLetter
	Reason  string // quarantine reason
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
	Confirmed, Returned, Nacked, Unknown int
	At                                   time.Time
}

// Result is how an operation ended. Selected counts the messages the
// operation published, as the command line's JSON does.
type Result struct {
	Operation      string
	Selected       int
	SkippedApplied int
	Confirmed      int
	Returned       int
	Nacked         int
	Unknown        int
	NotSent        int // never published: certainly still in the DLQ
	// Cancelled is set when the operator stopped the operation before
	// every message was sent.
	Cancelled bool
	// Notes are caveats the operator must read (copies that exist twice,
	// properties dropped).
	Notes []string
}
