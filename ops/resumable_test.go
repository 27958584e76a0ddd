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
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
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

// An import whose final record the log's search cannot find (written by
// hand, "final" escaped: the record still verifies, since its hash is of
// what it says) is finished all the same: the file is imported whole,
// not refused as nothing to resume.
func TestAnImportFinishedInALogWrittenByHandIsNotResumed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, export := strings.Repeat("5e", 32), strings.Repeat("e1", 32)
	intent := audit.Record{Operator: "ana", Action: actions.ActionImport, Operation: "imp-1", Vhost: "/", Queue: "orders.dlq",
		Target: "queue:orders.dlq", Outcome: domain.OutcomeIntent, Detail: map[string]string{"file": "orders.jsonl", "file_sha256": sum, "export_id": export, "streamed": "true"}}
	final := intent
	final.Outcome, final.Detail = domain.OutcomeFinal, nil
	if _, err := st.AppendAll(ctx, []audit.Record{intent, final}); err != nil {
		t.Fatal(err)
	}
	o := &Ops{c: Clients{OpenAudit: func() (audit.Store, error) { return audit.OpenFile(path) }}}
	if r, prior, err := o.resumableImport(ctx, "/", sum, export); r != nil || err != nil || prior == nil || prior.id != "imp-1" || prior.file != "" {
		t.Fatalf("a finished import: %+v, prior %+v, %v; want nothing to resume, and imp-1 named as the import before", r, prior, err)
	}
	// Another file of the same export (compressed, say) finds it by the
	// export's ID, naming the file it read; another export does not.
	other := strings.Repeat("0a", 32)
	if r, prior, err := o.resumableImport(ctx, "/", other, export); r != nil || err != nil || prior == nil || prior.id != "imp-1" || prior.file != "orders.jsonl" {
		t.Fatalf("a copy of the export: %+v, prior %+v, %v; want imp-1 named as its import, from orders.jsonl", r, prior, err)
	}
	if r, prior, err := o.resumableImport(ctx, "/", other, strings.Repeat("0b", 32)); r != nil || err != nil || prior != nil {
		t.Fatalf("another export: %+v, prior %+v, %v; want no import of it", r, prior, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	escaped := strings.Replace(string(b), `"outcome":"final"`, `"outcome":"fin\u0061l"`, 1)
	if escaped == string(b) {
		t.Fatal("no final record to rewrite")
	}
	if err := os.WriteFile(path, []byte(escaped), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := audit.Verify(ctx, mustOpen(t, path)); err != nil || !v.OK {
		t.Fatalf("the rewritten log: %+v, %v; want it to verify", v, err)
	}
	o = &Ops{c: Clients{OpenAudit: func() (audit.Store, error) { return audit.OpenFile(path) }}}
	if r, _, err := o.resumableImport(ctx, "/", sum, export); r != nil || err != nil {
		t.Fatalf("a finished import, its final record escaped: %+v, %v; want nothing to resume", r, err)
	}
}

func mustOpen(t *testing.T, path string) audit.Store {
	t.Helper()
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// warren's marks on a message are believed for an operation the audit
// log holds: found by its intent record, the first of every operation,
// among a log whose other lines are not decoded; a new operation is
// found once the log is read again.
func TestAMarkIsBelievedForAnOperationTheLogHolds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	st := mustOpen(t, path)
	op := func(id string) []audit.Record {
		intent := audit.Record{Operator: "ana", Action: actions.ActionReplay, Operation: id, Vhost: "/", Queue: "orders.dlq",
			Target: "queue:orders", Outcome: domain.OutcomeIntent, Detail: map[string]string{"streamed": "true"}}
		done := intent
		done.Outcome, done.Detail, done.MessageIDs = domain.OutcomeConfirmed, nil, []string{"m-1"}
		return []audit.Record{intent, done}
	}
	if _, err := st.AppendAll(ctx, op("op-a")); err != nil {
		t.Fatal(err)
	}
	o := &Ops{c: Clients{OpenAudit: func() (audit.Store, error) { return st, nil }}}
	if !o.knownOperation("op-a") || o.knownOperation("op-b") {
		t.Fatalf("known: op-a %v, op-b %v; want op-a alone", o.knownOperation("op-a"), o.knownOperation("op-b"))
	}
	if _, err := st.AppendAll(ctx, op("op-b")); err != nil {
		t.Fatal(err)
	}
	o.knownOps.read = time.Time{} // as after knownRefresh
	if !o.knownOperation("op-b") {
		t.Fatal("op-b, recorded since, is not known once the log is read again")
	}
}

// An audit log two contexts share (a team's log, one file for several
// clusters) holds operations on vhosts and queues of the same names on
// different brokers: an interrupted one is resumed, and an import
// finished or named, only on the context that ran it.
func TestAnOperationIsResumedOnlyOnTheContextThatRanIt(t *testing.T) {
	ctx := context.Background()
	st, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum, export := strings.Repeat("5e", 32), strings.Repeat("e1", 32)
	replay := audit.Record{Operator: "ana", Context: "eu", Action: actions.ActionReplay, Operation: "rep-1", Vhost: "/", Queue: "orders.dlq",
		Target: "queue:orders", Outcome: domain.OutcomeIntent, Detail: map[string]string{"streamed": "true"}}
	imp := audit.Record{Operator: "ana", Context: "eu", Action: actions.ActionImport, Operation: "imp-1", Vhost: "/", Queue: "orders.dlq",
		Target: "queue:orders", Outcome: domain.OutcomeIntent, Detail: map[string]string{"file": "orders.jsonl", "file_sha256": sum, "export_id": export, "streamed": "true", "to": "/orders"}}
	if _, err := st.AppendAll(ctx, []audit.Record{replay, imp}); err != nil {
		t.Fatal(err)
	}
	on := func(name string) *Ops {
		return &Ops{c: Clients{Context: &config.Context{Name: name}, OpenAudit: func() (audit.Store, error) { return st, nil }}}
	}
	if kept, err := on("us").resumableRecords(ctx, "/", "orders.dlq", ""); err != nil || len(kept) != 0 {
		t.Errorf("context us keeps %d records (%v) of eu's replay, want none", len(kept), err)
	}
	if kept, err := on("eu").resumableRecords(ctx, "/", "orders.dlq", ""); err != nil || !slices.Equal(operations(kept), []string{"rep-1", "imp-1"}) {
		t.Errorf("context eu keeps %v (%v), want its two operations", operations(kept), err)
	}
	target := &Target{Ref: domain.QueueRef{Vhost: "/", Name: "orders.dlq"}}
	if _, err := on("us").resumable(ctx, target, "rep-1"); err == nil || !strings.Contains(err.Error(), "operation rep-1 was run on context eu, not us") {
		t.Errorf("context us resuming eu's rep-1 by its ID: %v, want a refusal naming eu", err)
	}
	if r, prior, err := on("us").resumableImport(ctx, "/", sum, export); r != nil || prior != nil || err != nil {
		t.Errorf("context us finds eu's import: %+v, prior %+v, %v; want none", r, prior, err)
	}
	if r, _, err := on("eu").resumableImport(ctx, "/", sum, export); err != nil || r == nil || r.Op.ID != "imp-1" {
		t.Errorf("context eu does not find its interrupted import: %+v, %v", r, err)
	}
}

// resumableImport is importHistory's interrupted or finished import.
func (o *Ops) resumableImport(ctx context.Context, vhost, sum, export string) (*actions.Resumption, *priorImport, error) {
	h, err := o.importHistory(ctx, vhost, sum, export)
	return h.resume, h.prior, err
}
