package ops

import (
	"context"
	"sync"
	"time"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// Operations the audit log knows, for believing warren's own marks on a
// message (docs/ARCHITECTURE.md §7): a quarantine reason or a replay count
// a publisher wrote names no operation of the log, so nothing warren does
// depends on it.

// knownRefresh bounds how often an unknown ID has the log read again.
const knownRefresh = 5 * time.Second

// knownReadTimeout bounds one read of the log.
const knownReadTimeout = 10 * time.Second

type knownOps struct {
	mu   sync.Mutex
	ids  map[string]bool
	read time.Time
}

// knownOperation reports whether the audit log holds operation id. A log
// that cannot be read knows none: the marks stay the message's claim.
func (o *Ops) knownOperation(id string) bool {
	k := &o.knownOps
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids[id] {
		return true
	}
	if k.ids != nil && time.Since(k.read) < knownRefresh {
		return false
	}
	k.read = time.Now()
	st, err := o.AuditStore()
	if err != nil || st == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), knownReadTimeout)
	defer cancel()
	// Every operation's first record is its intent: the lines naming one
	// are all that is decoded (a log of 223 MB took 0.9 s decoded whole,
	// read again every knownRefresh while unknown marks come).
	ids := map[string]bool{}
	if err := audit.ScanWhere(ctx, st, [][]byte{[]byte(`"` + domain.OutcomeIntent + `"`)}, func(r audit.Record) error {
		if r.Operation != "" {
			ids[r.Operation] = true
		}
		return nil
	}); err != nil {
		return false
	}
	k.ids = ids
	return ids[id]
}
