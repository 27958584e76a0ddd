package ops

import (
	"context"
	"errors"

	"github.com/warrenops/warren/audit"
)

// AuditReader is the audit screen's view of the store.
type AuditReader struct{ o *Ops }

// Operations returns the newest operations, oldest first. A damaged entry
// ends the reading there: the screen shows what is readable and the
// chain's verdict says what is wrong.
func (a AuditReader) Operations(ctx context.Context, limit int) ([]audit.OperationSummary, error) {
	st, err := a.o.AuditStore()
	if err != nil {
		return nil, err
	}
	var recs []audit.Record
	err = st.Scan(ctx, func(r audit.Record) error {
		recs = append(recs, r)
		return nil
	})
	var ce *audit.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	ops := audit.Summaries(recs)
	if len(ops) > limit {
		ops = ops[len(ops)-limit:]
	}
	return ops, nil
}

// Verify walks the whole chain.
func (a AuditReader) Verify(ctx context.Context) (audit.Result, error) {
	st, err := a.o.AuditStore()
	if err != nil {
		return audit.Result{}, err
	}
	return audit.Verify(ctx, st)
}

// Describe names the store, or says it could not be opened.
func (a AuditReader) Describe() string {
	st, err := a.o.AuditStore()
	if err != nil {
		return "audit store unavailable"
	}
	return st.Describe()
}

// Audit is the audit log as the dashboard reads it.
func (o *Ops) Audit() AuditReader { return AuditReader{o} }
