package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// A resume keeps of the audit log the records of the operations it could
// finish, not the log: a finished operation's records are let go of at
// its final record, another queue's are never kept, and the operation
// chosen is the one a reading of the whole log chooses. A log whose
// chain breaks refuses the resume.
func TestAResumeKeepsTheOpenOperationsRecordsNotTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(op, queue, outcome string, ids ...string) audit.Record {
		r := audit.Record{Operator: "ana", Action: actions.ActionReplay, Operation: op, Vhost: "/", Queue: queue,
			Target: "queue:orders", Outcome: outcome, MessageIDs: ids, LogicalIDs: ids}
		if outcome == domain.OutcomeIntent {
			r.Detail = map[string]string{"streamed": "true", "to": "/orders"}
		}
		return r
	}
	page := func(op, queue, outcome string, from int) audit.Record {
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-m-%d", op, from+i)
		}
		return rec(op, queue, outcome, ids...)
	}
	var log []audit.Record
	// done-1 finished long ago, with many records; open-1 is interrupted
	// on the same queue, open-2 on another, done-2 finished between
	// open-1's records.
	log = append(log, rec("done-1", "orders.dlq", domain.OutcomeIntent))
	for i := range 20 {
		log = append(log, page("done-1", "orders.dlq", domain.OutcomePublishing, i*100), page("done-1", "orders.dlq", domain.OutcomeConfirmed, i*100))
	}
	log = append(log, rec("done-1", "orders.dlq", domain.OutcomeFinal),
		rec("open-1", "orders.dlq", domain.OutcomeIntent),
		page("open-1", "orders.dlq", domain.OutcomePublishing, 0),
		rec("done-2", "orders.dlq", domain.OutcomeIntent),
		rec("open-2", "payments.dlq", domain.OutcomeIntent),
		page("open-1", "orders.dlq", domain.OutcomeConfirmed, 0),
		rec("done-2", "orders.dlq", domain.OutcomeFinal))
	if _, err := st.AppendAll(ctx, log); err != nil {
		t.Fatal(err)
	}
	o := &Ops{c: Clients{OpenAudit: func() (audit.Store, error) { return st, nil }}}

	kept, err := o.resumableRecords(ctx, "/", "orders.dlq", "")
	if err != nil {
		t.Fatal(err)
	}
	if ops := operations(kept); !slices.Equal(ops, []string{"open-1"}) || len(kept) != 3 {
		t.Fatalf("kept %d records of %v, want the 3 of open-1 alone", len(kept), ops)
	}
	r, err := actions.ReadResumption(kept, "/", "orders.dlq", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Op.ID != "open-1" || len(r.Confirmed) != 100 {
		t.Fatalf("resumes %s with %d confirmed, want open-1 with 100", r.Op.ID, len(r.Confirmed))
	}

	// Named, a finished operation is read whole, and said to be finished.
	kept, err = o.resumableRecords(ctx, "/", "orders.dlq", "done-1")
	if err != nil {
		t.Fatal(err)
	}
	if ops := operations(kept); !slices.Equal(ops, []string{"done-1"}) || len(kept) != 42 {
		t.Fatalf("kept %d records of %v, want the 42 of done-1", len(kept), ops)
	}
	if _, err := actions.ReadResumption(kept, "/", "orders.dlq", "done-1"); !errors.Is(err, actions.ErrNothingToResume) {
		t.Fatalf("resuming a finished operation: %v, want nothing to resume", err)
	}

	// A record altered in the middle of the log: nothing is resumed.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "done-1-m-1000", "done-1-m-9999", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	o = &Ops{c: Clients{OpenAudit: func() (audit.Store, error) { return audit.OpenFile(path) }}}
	if _, err := o.resumableRecords(ctx, "/", "orders.dlq", ""); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("a log with an altered record: %v, want the resume refused", err)
	}
}

// operations are the operations records belong to, each once, in order.
func operations(records []audit.Record) []string {
	var out []string
	for _, r := range records {
		if !slices.Contains(out, r.Operation) {
			out = append(out, r.Operation)
		}
	}
	return out
}
