//go:build integration

package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// editorScript writes a script that edits the file it is given with a
// sed expression (or exits with code), and returns it for $EDITOR.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// runEditor runs the draft's editor as a front end would.
func runEditor(t *testing.T, d *EditDraft, editor string) error {
	t.Helper()
	t.Setenv("EDITOR", editor)
	return d.Command().Run()
}

// editScene dead-letters ev-a, ev-b by rejection, opens a session on the
// DLQ and starts an edit of ev-a.
func editScene(t *testing.T) (*Ops, domain.QueueRef, *Browse, *EditDraft) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-edit")
	rejectedScene(t, vhost, 2)
	l := newOps(t, ordersContext())
	ref, b, d := startEdit(t, l, vhost)
	return l, ref, b, d
}

// startEdit opens a session on vhost's orders.dlq, which holds ev-a and
// ev-b, and starts an edit of ev-a.
func startEdit(t *testing.T, l *Ops, vhost string) (domain.QueueRef, *Browse, *EditDraft) {
	t.Helper()
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	tg, err := l.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Browse(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	page, err := b.Next(ctx)
	if err != nil || len(page.Letters) != 2 {
		t.Fatalf("page = %+v, %v; want the 2 dead letters", page, err)
	}
	d, err := l.StartEdit(ctx, ref, b, page.Letters[0])
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(d.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("edit file %s: %v, mode %v; want 0600", d.Path, err, st.Mode())
	}
	return ref, b, d
}

func TestEditResubmitsTheCopyAndAuditsBothHashes(t *testing.T) {
	l, ref, b, d := editScene(t)
	ctx := testCtx(t)
	orig := d.Letter
	if orig.LogicalID != "ev-a" {
		t.Fatalf("editing %q, want ev-a", orig.LogicalID)
	}
	err := runEditor(t, d, editorScript(t, `sed -i -e 's/"id": "ev-a"/"id": "ev-a", "fixed": true/' -e 's/"event_id": "ev-a"/"event_id": "ev-a", "schema": 2/' "$1"`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := l.Plan(ctx, Scope{Action: Edit, Queue: ref, Draft: d})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("edit file still there once the edit is planned: %v", err)
	}
	if plan.Publish != 1 || plan.Destinations[0].Name != "queue orders (default exchange)" {
		t.Fatalf("plan = %+v", plan)
	}
	for _, want := range []string{`+  "fixed": true`, `+  "schema": 2`, "--- body (original)", "+++ headers (edited)"} {
		if !strings.Contains(plan.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, plan.Diff)
		}
	}
	res, err := l.Run(ctx, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 1 || res.Operation == "" {
		t.Fatalf("result = %+v, want 1 confirmed", res)
	}

	conn := testConn(t, ref.Vhost)
	ch := testkit.Channel(t, conn)
	testkit.WaitDepth(t, ch, "orders", 1)
	m, ok, err := ch.Get("orders", true)
	if err != nil || !ok {
		t.Fatalf("get from orders: %v %v", ok, err)
	}
	if string(m.Body) != `{"id":"ev-a","fixed":true}` {
		t.Errorf("copy body = %s", m.Body)
	}
	if m.Headers["event_id"] != "ev-a" || m.Headers["schema"] != int64(2) {
		t.Errorf("copy headers = %v: want the same logical ID and the edited header", m.Headers)
	}
	if m.Headers[actions.HeaderEditedFrom] != actions.Sha256Hex(orig.Body) || m.MessageId != orig.MessageID {
		t.Errorf("copy %s carries %s=%v, want the original body's sha256", m.MessageId, actions.HeaderEditedFrom, m.Headers[actions.HeaderEditedFrom])
	}
	if held := b.Letters(); len(held) != 1 || held[0].LogicalID != "ev-b" {
		t.Errorf("still held: %+v, want only ev-b", held)
	}
	b.Close()
	testkit.WaitDepth(t, ch, "orders.dlq", 1)

	st, err := l.AuditStore()
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	if err := st.Scan(ctx, func(r audit.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	outcomes := make([]string, len(recs))
	for i, r := range recs {
		outcomes[i] = r.Outcome
		if r.Action != actions.ActionEdit || r.Operation != res.Operation {
			t.Errorf("record %d is %s of %s, want edit of %s", i, r.Action, r.Operation, res.Operation)
		}
	}
	if !slices.Equal(outcomes, []string{domain.OutcomeIntent, domain.OutcomeConfirmed, domain.OutcomeFinal}) {
		t.Fatalf("records %v, want intent, confirmed, final", outcomes)
	}
	intent := recs[0]
	edited := audit.BodyDigest([]byte(`{"id":"ev-a","fixed":true}`))
	if intent.Detail["body_sha256"] != audit.BodyDigest(orig.Body) || intent.Detail["edited_body_sha256"] != edited ||
		!slices.Equal(intent.LogicalIDs, []string{"ev-a"}) {
		t.Errorf("intent = %+v, want both hashes and the logical ID", intent)
	}
	if got := recs[1].Detail["edited_body_sha256"]; got != `["`+edited+`"]` {
		t.Errorf("confirmed record's edited hash = %s", got)
	}
	for _, r := range recs {
		for k, v := range r.Detail {
			if strings.Contains(v, "fixed") {
				t.Errorf("record %d detail %s holds the body: %s", r.Seq, k, v)
			}
		}
	}
	if v, err := audit.Verify(ctx, st); err != nil || !v.OK {
		t.Errorf("audit verify = %v, %v", v, err)
	}
}

func TestEditPublishesNothingWhenTheEditCannotGo(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         error
		wantText     string
	}{
		{"unchanged", `true`, ErrEditUnchanged, "changed nothing"},
		{"editor exits 1", `sed -i 's/ev-a/ev-z/' "$1"; exit 1`, ErrEditorFailed, "editor failed"},
		{"headers no longer JSON", `sed -i 's/"event_id": "ev-a"/"event_id": ev-a/' "$1"`, nil, "not valid JSON: line 3"},
		{"headers not an object", `sed -i 's/"headers": {/"headers": [{/; s/^  },$/  }],/' "$1"`, nil, "headers must be a JSON object"},
		{"a broker header added", `sed -i 's/"event_id": "ev-a"/"event_id": "ev-a", "x-death": []/' "$1"`, nil, "x-death is the broker's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ref, b, d := editScene(t)
			editorErr := runEditor(t, d, editorScript(t, tc.script))
			_, err := l.Plan(testCtx(t), Scope{Action: Edit, Queue: ref, Draft: d, EditorErr: editorErr})
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("Plan of the edit = %v, want %q", err, tc.wantText)
			}
			if !strings.HasSuffix(err.Error(), "nothing was published; the message stays in orders.dlq") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line saying the message stays", err)
			}
			if len(b.Letters()) != 2 {
				t.Errorf("session holds %d, want both letters still", len(b.Letters()))
			}
			b.Close()
			ch := testkit.Channel(t, testConn(t, ref.Vhost))
			testkit.WaitDepth(t, ch, "orders.dlq", 2)
			if n := testkit.Depth(t, ch, "orders"); n != 0 {
				t.Errorf("orders holds %d, want nothing published", n)
			}
		})
	}
}

func TestEditOfAMessageNoLongerHeldIsRefused(t *testing.T) {
	l, ref, b, d := editScene(t)
	if err := runEditor(t, d, editorScript(t, `sed -i 's/"id": "ev-a"/"id": "ev-a2"/' "$1"`)); err != nil {
		t.Fatal(err)
	}
	plan, err := l.Plan(testCtx(t), Scope{Action: Edit, Queue: ref, Draft: d})
	if err != nil {
		t.Fatal(err)
	}
	b.Close() // the session ends while the prompt is open
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.Run(ctx, plan, nil); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Run of the edit after the session closed = %v, want ErrNotHeld", err)
	}
	ch := testkit.Channel(t, testConn(t, ref.Vhost))
	testkit.WaitDepth(t, ch, "orders.dlq", 2)
	if n := testkit.Depth(t, ch, "orders"); n != 0 {
		t.Errorf("orders holds %d, want nothing published", n)
	}
}

func TestEditIsRefusedInAReadOnlyContext(t *testing.T) {
	c := ordersContext()
	c.ReadOnly = true
	l := newOps(t, c)
	if _, err := l.StartEdit(testCtx(t), domain.QueueRef{Vhost: "/", Name: "orders.dlq"}, &Browse{}, domain.DeadLetter{}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("StartEdit in a read-only context = %v, want ErrReadOnly", err)
	}
}

// An edit says what a replay of the original would: the inbox reports it
// applied, and its destination, full with overflow drop-head, would push
// out the message at its head.
func TestAnEditWarnsAsAReplayWould(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-edit")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq", "x-max-length": int32(1)})
	for _, m := range orderEvents(2) { // one at a time: orders holds one
		testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{m})
	}
	if err := ch.Publish("", "orders", false, false, amqp.Publishing{Body: []byte("waiting")}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "orders", 1)
	var opened atomic.Int32
	l := inboxOps(t, testDSN, inboxTable(t), &opened) // ev-a and ev-b applied
	l.c.Context.Queues[0].LogicalID = "header:event_id"
	ctx := testCtx(t)
	ref, _, d := startEdit(t, l, vhost)
	if err := runEditor(t, d, editorScript(t, `sed -i -e 's/"id": "ev-a"/"id": "ev-a", "fixed": true/' "$1"`)); err != nil {
		t.Fatal(err)
	}
	p, err := l.Plan(ctx, Scope{Action: Edit, Queue: ref, Draft: d})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(p.Warnings, "\n")
	for _, want := range []string{"the inbox reports ev-a applied", "holds 1 of its max-length 1 (overflow drop-head)"} {
		if !strings.Contains(all, want) {
			t.Errorf("the edit's warnings lack %q:\n%s", want, all)
		}
	}
}
