package auditlog

import (
	"context"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// Reader is what the audit screen needs from the audit store.
type Reader interface {
	// Operations returns the most recent operations, oldest first, at
	// most limit of them.
	Operations(ctx context.Context, limit int) ([]domain.OperationSummary, error)
	// Verify walks the whole chain and counts the operations it holds.
	Verify(ctx context.Context) (ops.Chain, error)
	// Operation reads every record of one operation.
	Operation(ctx context.Context, id string) (*ops.OperationDetail, error)
	// Describe names the store, without secrets.
	Describe() string
}

// Resumer finishes an operation the audit log holds as incomplete, as
// `warren dlq resume` does. A read-only context has none.
type Resumer interface {
	// Plan reads what resuming the operation (Action ops.Resume) would
	// do, holding nothing; it refuses what `dlq resume` refuses.
	Plan(ctx context.Context, s ops.Scope) (*ops.Plan, error)
	// Run carries the plan out; progress is called from its goroutines.
	Run(ctx context.Context, p *ops.Plan, progress func(ops.Progress)) (ops.Result, error)
}
