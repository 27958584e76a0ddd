//go:build integration

package ops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
)

// failingDisk is a file store whose disk gives out: once the operation
// has recorded failAt batches of confirms (or more, when the last group
// held several), every append fails until the test mends it.
type failingDisk struct {
	audit.Store
	failAt    int
	confirms  atomic.Int32
	broken    atomic.Bool
	mendedYet atomic.Bool
}

func (d *failingDisk) Append(ctx context.Context, r audit.Record) (audit.Record, error) {
	out, err := d.AppendAll(ctx, []audit.Record{r})
	if err != nil {
		return audit.Record{}, err
	}
	return out[0], nil
}

// AppendAll stores a group whole or not at all, as the stores do: once
// failAt confirm records are stored, the next group fails, and every
// one after it until the test mends the disk.
func (d *failingDisk) AppendAll(ctx context.Context, rs []audit.Record) ([]audit.Record, error) {
	if !d.mendedYet.Load() && int(d.confirms.Load()) >= d.failAt {
		d.broken.Store(true)
	}
	if d.broken.Load() {
		return nil, errors.New("write: no space left on device")
	}
	out, err := d.Store.AppendAll(ctx, rs)
	if err == nil {
		for _, r := range rs {
			if r.Outcome == domain.OutcomeConfirmed {
				d.confirms.Add(1)
			}
		}
	}
	return out, err
}

func (d *failingDisk) mend() { d.broken.Store(false); d.mendedYet.Store(true) }

// interruptedScene has the broker dead-letter n order events into
// orders.dlq, then replays them with an audit store whose disk fails
// after two batches of confirms: the operation is left incomplete, as
// after a crash, with some copies confirmed and their sources acked or
// not, and some published without a recorded confirm.
func interruptedScene(t *testing.T, n int) (*Ops, *failingDisk, *amqp.Channel, domain.QueueRef, string) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-ops-audit")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"event_id": fmt.Sprintf("ev-%d", i)}, Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)
	// The consumer that failed is fixed but not running yet: the copies
	// stay in orders to be counted.
	m, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := audit.OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	disk := &failingDisk{Store: file, failAt: 2}
	o, err := New(Clients{Context: ordersContext(), Operator: "tester", Mgmt: m, Dial: dial,
		OpenAudit: func() (audit.Store, error) { return disk, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	ctx := testCtx(t)
	res, err := unasked(t, o, ctx, Scope{Action: Replay, Queue: ref, Rate: 4000})
	if !errors.Is(err, actions.ErrAuditUnavailable) {
		t.Fatalf("the replay on a failing disk ended with %v (%+v), want the audit store unavailable", err, res.Counts)
	}
	// What the failed run held comes back to the DLQ.
	deadline := time.Now().Add(time.Minute)
	for testkit.Depth(t, ch, "orders")+testkit.Depth(t, ch, "orders.dlq") < n {
		if time.Now().After(deadline) {
			t.Fatal("the failed run's messages never came back to orders.dlq")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return o, disk, ch, ref, res.Operation
}

func TestTheAuditScreensResumeFinishesAnInterruptedReplay(t *testing.T) {
	const n = 1500
	o, disk, ch, ref, id := interruptedScene(t, n)
	a := o.Audit()
	ctx := testCtx(t)

	sums, err := a.Operations(ctx, 10)
	if err != nil || len(sums) != 1 || sums[0].Operation != id || !sums[0].Incomplete() {
		t.Fatalf("operations %+v, %v; want %s alone, incomplete", sums, err, id)
	}
	before, err := a.Operation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, m := range before.Messages {
		outcomes[m.Outcome]++
	}
	if !before.Walk || outcomes[domain.OutcomeConfirmed] == 0 || outcomes[domain.OutcomePublishing] == 0 {
		t.Fatalf("the interrupted operation's messages: %v (streamed %v); want confirmed ones and ones published without a confirm", outcomes, before.Walk)
	}

	disk.mend()
	plan, err := o.Plan(ctx, Scope{Action: Resume, Queue: ref, Operation: id})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Operation != id || plan.Depth <= 0 || plan.Twins != outcomes[domain.OutcomeConfirmed] || plan.Unconfirmed != outcomes[domain.OutcomePublishing] ||
		!strings.HasPrefix(plan.Summary, "Resume replay "+id+" on orders.dlq") {
		t.Fatalf("plan %+v; want %d twins and %d unconfirmed of %s", plan, outcomes[domain.OutcomeConfirmed], outcomes[domain.OutcomePublishing], id)
	}
	var mu sync.Mutex
	var last Progress
	res, err := o.Run(ctx, plan, func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		last = p
	})
	if err != nil {
		t.Fatalf("resume: %v (%+v)", err, res.Counts)
	}
	if res.Operation != id || !last.Finished {
		t.Fatalf("resume result %+v, last progress %+v", res.Counts, last)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", 0)

	// Every event is in orders; copies may exist twice only for what was
	// in flight when the disk failed: a confirm window.
	seen := map[string]int{}
	total := testkit.Depth(t, ch, "orders")
	deliveries, err := ch.Consume("orders", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for ; total > 0; total-- {
		select {
		case d := <-deliveries:
			seen[d.MessageId]++
		case <-ctx.Done():
			t.Fatal("orders did not deliver its messages")
		}
	}
	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	if len(seen) != n || dups > 2048 {
		t.Fatalf("orders holds %d distinct events (want %d) with %d duplicates", len(seen), n, dups)
	}

	after, err := a.Operation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Incomplete() || after.Resumes != 1 {
		t.Fatalf("after the resume: incomplete %v, resumes %d", after.Incomplete(), after.Resumes)
	}
	rows := map[string]int{}
	for _, m := range after.Messages {
		rows[m.LogicalID]++
		if m.Outcome != domain.OutcomeConfirmed {
			t.Fatalf("message %s after the resume: %+v, want confirmed", m.MessageID, m)
		}
	}
	if len(after.Messages) != n || len(rows) != n {
		t.Fatalf("the detail lists %d rows for %d logical IDs, want one row for each of %d", len(after.Messages), len(rows), n)
	}
	chain, err := a.Verify(ctx)
	if err != nil || !chain.OK || chain.Operations != 1 {
		t.Fatalf("chain %+v, %v; want intact with one operation", chain, err)
	}
	if _, err := o.Plan(ctx, Scope{Action: Resume, Queue: ref, Operation: id}); err == nil || !strings.Contains(err.Error(), "finished at") {
		t.Fatalf("resuming it again: %v, want it refused as finished", err)
	}
}

func TestAResumePlanRefusesWhatDlqResumeRefuses(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-audit")
	rejectedScene(t, vhost, 2)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	ctx := testCtx(t)
	tests := []struct {
		name string
		ctx  *config.Context
		id   string
		want string
	}{
		{"an unknown operation", ordersContext(), "20990101T000000Z-00000000", "no operation 20990101T000000Z-00000000"},
		{"a read-only context", &config.Context{Name: "ro", ReadOnly: true}, "20990101T000000Z-00000000", `context "ro" is read-only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newOps(t, tt.ctx).Plan(ctx, Scope{Action: Resume, Queue: ref, Operation: tt.id})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Plan of a resume: %v, want %q", err, tt.want)
			}
		})
	}
}

func TestTheDetailGivesEachMessageItsLatestOutcome(t *testing.T) {
	op := audit.Op{ID: "op-1", Action: "replay", Operator: "ana", Host: "ops-1", Context: "prod", Vhost: "/", Queue: "orders.dlq"}
	intent := op.Intent(audit.Plan{Selected: 3, Destinations: []string{"queue orders"}, Bytes: 300, Extra: map[string]string{"filter": `reason == "rejected"`}})
	intent.MessageIDs, intent.LogicalIDs = []string{"m1", "m2", "m3"}, []string{"e1", "e2", "e3"}
	recs := []audit.Record{
		intent,
		op.Outcome(domain.OutcomeSkippedApplied, []string{"m9"}, []string{"e9"}, nil),
		op.Outcome(domain.OutcomeConfirmed, []string{"m2"}, []string{"e2"}, nil),
		op.Outcome(domain.OutcomeReturned, []string{"m1"}, []string{"e1"}, nil),
	}
	for i := range recs {
		recs[i].Seq = int64(i + 1)
	}
	d := detailOf(audit.Summaries(recs)[0], recs)
	got := fmt.Sprint(d.Messages)
	want := "[{4 e1 m1 returned} {3 e2 m2 confirmed} {1 e3 m3 intent} {2 e9 m9 skipped_applied}]"
	if got != want {
		t.Fatalf("messages %s\nwant     %s", got, want)
	}
	if d.Filter != `reason == "rejected"` || d.Host != "ops-1" || d.Context != "prod" || d.Bytes != 300 || fmt.Sprint(d.Destinations) != "[queue orders]" {
		t.Fatalf("detail %+v", d)
	}
}

// An export's one record says what an intent would: who, where, the
// filter, the bytes and the file it wrote.
func TestTheDetailOfAnExportIsItsOneRecord(t *testing.T) {
	op := audit.Op{ID: "op-2", Action: ActionExport, Operator: "ana", Host: "ops-1", Context: "prod", Vhost: "/", Queue: "orders.dlq", Target: "/srv/orders.jsonl"}
	rec := op.Final(map[string]int{domain.OutcomeExported: 2, "selected": 2, "read": 5})
	rec.Detail["filter"], rec.Detail["bytes"], rec.Detail["file_sha256"] = `reason == "rejected"`, "812", "ab12"
	rec.Seq = 7
	recs := []audit.Record{rec}
	d := detailOf(audit.Summaries(recs)[0], recs)
	if d.Host != "ops-1" || d.Context != "prod" || d.Filter != `reason == "rejected"` || d.Bytes != 812 || d.FileSHA256 != "ab12" ||
		d.Selected != 2 || d.Counts[domain.OutcomeExported] != 2 || d.Incomplete() || len(d.Messages) != 0 {
		t.Fatalf("detail %+v", d)
	}
}
