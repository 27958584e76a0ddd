package auditlog

import (
	"context"

	"github.com/warrenops/warren/audit"
)

// Reader is what the audit screen needs from the audit store.
type Reader interface {
	// Operations returns the most recent operations, oldest first, at
	// most limit of them.
	Operations(ctx context.Context, limit int) ([]audit.OperationSummary, error)
	// Verify walks the whole chain.
	Verify(ctx context.Context) (audit.Result, error)
	// Describe names the store, without secrets.
	Describe() string
}
