package deadletters

import (
	"context"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// Deps are the services the DLQ screen works through. Tests pass fakes;
// ops implements them with the real packages.
type Deps struct {
	Browser Browser
	// Inbox may be nil: inbox columns then read "unknown".
	Inbox InboxLookup
	// Actions may be nil in a read-only context.
	Actions Actions
	// CompileFilter turns a filter expression (docs/ARCHITECTURE.md §5) into a ops.Filter.
	CompileFilter func(src string) (ops.Filter, error)
	// Scanner may be nil: whole-queue statistics are then unavailable.
	Scanner Scanner
	// Exporter may be nil: export (E) is then unavailable.
	Exporter Exporter
}

// Exporter writes a DLQ into a file, as `dlq export` does, reading it
// without harm, and records the export in the audit log.
type Exporter interface {
	ExportFile(ctx context.Context, f ops.FileExport, progress func(read int)) (ops.FileExportResult, error)
}

// Scanner reads a whole DLQ for statistics, keeping counters, never
// bodies.
type Scanner interface {
	// Scan counts every message the queue holds but this screen's
	// session does not, and gives them all back; progress is called now
	// and then with how many were read. Where reading could cost
	// messages (a quorum DLQ whose delivery limit counts returns) it
	// fails with a *domain.RefusedError, unless allowRisk (the override
	// the operator gave the browse, which the scan's reading shares).
	Scan(ctx context.Context, queue domain.QueueRef, allowRisk bool, progress func(read int)) (*domain.Stats, error)
}

// Browser opens browse sessions on a DLQ.
type Browser interface {
	// Open starts a session. Where browsing could cost messages (a quorum
	// DLQ with a delivery limit) it fails with a *domain.RefusedError unless
	// allowRisk is true.
	Open(ctx context.Context, queue domain.QueueRef, allowRisk bool) (ops.Session, error)
}

// InboxLookup finds which logical IDs a consumer already applied.
type InboxLookup interface {
	// Lookup returns the applied IDs with the time they were applied (zero
	// when the inbox has no time column); an absent ID is pending. It
	// fails with ops.ErrNoInbox when the queue has no inbox configured.
	Lookup(ctx context.Context, queue domain.QueueRef, logicalIDs []string) (map[string]time.Time, error)
}

// StagingChecker is what Actions may also do: say, before the operator
// confirms, whether a run would refuse a staging (a canary no consumer
// would judge, a pace no consumer sets) before anything moves.
type StagingChecker interface {
	CheckStaging(ctx context.Context, p *ops.Plan, st ops.Staging) error
}

// Actions plans and executes replay and quarantine.
type Actions interface {
	Plan(ctx context.Context, s ops.Scope) (*ops.Plan, error)
	// Run runs a confirmed plan and reports progress as it goes;
	// progress is called from Run's goroutine.
	Run(ctx context.Context, plan *ops.Plan, progress func(ops.Progress)) (ops.Result, error)
}
