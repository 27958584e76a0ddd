package ops

import (
	"context"
	"errors"
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
)

// Holder is a browse session that holds letters an operation acts on:
// the command line's *Browse or the dashboard's Session. Only this
// package makes them.
type Holder interface {
	holder() *Browse
}

// Session holds a DLQ's messages unacknowledged while the operator looks.
type Session interface {
	Holder
	// Next holds one more page.
	Next(ctx context.Context) (Page, error)
	// Letters are the letters held now: after an action, those that were
	// acted on are no longer held.
	Letters() []domain.DeadLetter
	// Done reports the session's end: nil after Close, the cause when the
	// channel or connection died, a *dlq.TimeoutError (ErrTimedOut) when
	// it gave its messages back before the broker's consumer timeout.
	Done() <-chan error
	// Deadline is when the session gives its messages back, before the
	// broker's consumer timeout would take them, and why; zero while it
	// holds none or knows of no timeout.
	Deadline() (time.Time, string)
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

// The operations on dead letters; a release is a replay from a parking
// queue.
const (
	Replay     Action = actions.ActionReplay
	Quarantine Action = actions.ActionQuarantine
	Edit       Action = actions.ActionEdit
	Resume     Action = "resume"
)

// Progress is an operation's figures so far.
type Progress struct {
	// Total is how many are expected to settle, or, with OfRead, how
	// many are to be read (an unasked run, which no preview counted);
	// Read is how many were read so far.
	Total, Done                          int
	OfRead                               bool
	Read                                 int
	Published                            int
	Confirmed, Returned, Nacked, Unknown int
	// Finished is set on the last report.
	Finished bool
	At       time.Time
	// A staged run's figures: the stage under way (0: the canary), its
	// copies sent and its size (0: the rest), whether its verdict is
	// awaited, the copies applied and died again so far.
	Staged               bool
	Stage                int
	StageSent, StageSize int
	Judging              bool
	Applied, FailedAgain int
	// Pace is the automatic pace (--rate auto) and PaceWhy what it
	// rests on; 0 and "" otherwise.
	Pace    float64
	PaceWhy string
	// Blocked is the broker's reason while it blocks the publisher's
	// connection (a memory or disk alarm), since BlockedSince; "" while
	// it does not.
	Blocked      string
	BlockedSince time.Time
}

// Counts are an operation's figures, as the command line's JSON gives
// them.
type Counts = domain.Counts

// Result is how an operation ended: its figures, and the caveats the
// operator must read (copies that exist twice, properties dropped).
type Result struct {
	Counts
	Notes []string `json:"-"`
	// AuditHead is the audit log's head after the operation's last
	// record: the anchor for the ticket that `audit verify
	// --expect-head` checks. Nil when the final record was not written.
	AuditHead *domain.AuditHead `json:"audit_head,omitempty"`
}
