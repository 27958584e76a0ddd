//go:build integration

package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/testkit"
)

// Export, purge, import: the messages come back as they were — every
// property, every header in its type, every body byte.
func TestExportPurgeImportGivesBackTheSameMessages(t *testing.T) {
	s := newEmptyActScene(t, "")
	bodies := [][]byte{[]byte(`{"id":0}`), {0x00, 0xff, 0x80}, bytes.Repeat([]byte("y"), 4<<20)}
	var msgs []amqp.Publishing
	for i, b := range bodies {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), ContentType: "application/json", ContentEncoding: "identity",
			DeliveryMode: 2, Priority: 5, CorrelationId: "corr", ReplyTo: "reply", Type: "order.created", AppId: "shop",
			Timestamp: time.Unix(1700000002, 0).UTC(), Headers: typedHeaders(i), Body: b})
	}
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", msgs)
	before := s.getAll(t, "orders.dlq", len(msgs), false)

	file := filepath.Join(t.TempDir(), "orders.jsonl.gz")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", file); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if _, err := s.ch.QueuePurge("orders.dlq", false); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)

	out, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	var res struct {
		Operation string `json:"operation"`
		Confirmed int    `json:"confirmed"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Confirmed != len(msgs) {
		t.Fatalf("import --json %q (%v), want %d confirmed", out, err, len(msgs))
	}
	after := s.getAll(t, "orders.dlq", len(msgs), true)
	for i := range before {
		b, a := before[i], after[i]
		if !bytes.Equal(a.Body, b.Body) {
			t.Errorf("message %d: body of %d bytes came back as %d bytes", i, len(b.Body), len(a.Body))
		}
		if a.ContentType != b.ContentType || a.ContentEncoding != b.ContentEncoding || a.DeliveryMode != b.DeliveryMode || a.Priority != b.Priority ||
			a.CorrelationId != b.CorrelationId || a.ReplyTo != b.ReplyTo || a.Expiration != b.Expiration || a.MessageId != b.MessageId ||
			!a.Timestamp.Equal(b.Timestamp) || a.Type != b.Type || a.UserId != b.UserId || a.AppId != b.AppId {
			t.Errorf("message %d: properties %+v came back as %+v", i, props(b), props(a))
		}
		if !reflect.DeepEqual(a.Headers, b.Headers) {
			t.Errorf("message %d: headers\n%#v\ncame back as\n%#v", i, b.Headers, a.Headers)
		}
	}

	// The audit log names the file, its sha256 and each logical ID.
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var intent *audit.Record
	ids := 0
	_ = st.Scan(t.Context(), func(r audit.Record) error {
		if r.Operation != res.Operation {
			return nil
		}
		if r.Outcome == "intent" {
			rr := r
			intent = &rr
		}
		if r.Outcome == "confirmed" {
			ids += len(r.LogicalIDs)
		}
		return nil
	})
	if intent == nil || intent.Action != "import" || intent.Detail["file_sha256"] == "" || intent.Detail["file"] != file || ids != len(msgs) {
		t.Errorf("audit: intent %+v, %d logical IDs confirmed; want the import of %s with its sha256 and %d IDs", intent, ids, file, len(msgs))
	}
}

func props(d amqp.Delivery) string {
	return fmt.Sprintf("%s %s %d %d %s %s %q %s %s %s %s %s", d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority, d.CorrelationId,
		d.ReplyTo, d.Expiration, d.MessageId, d.Timestamp, d.Type, d.UserId, d.AppId)
}

// getAll takes n messages of queue in order: acked (gone) when take,
// else given back.
func (s *actScene) getAll(t *testing.T, queue string, n int, take bool) []amqp.Delivery {
	t.Helper()
	ch := testkit.Channel(t, testkit.Dial(t, s.vhost))
	var out []amqp.Delivery
	for range n {
		d, ok, err := ch.Get(queue, false)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", queue, ok, err)
		}
		out = append(out, d)
	}
	last := out[len(out)-1].DeliveryTag
	if take {
		if err := ch.Ack(last, true); err != nil {
			t.Fatal(err)
		}
	} else if err := ch.Nack(last, true, true); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDlqImportRefusesABadFileAndPublishesNothing(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-0", Body: []byte("b0")}, {MessageId: "m-1", Body: []byte("b1")}})
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", good); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	text, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tampered := strings.Replace(lines[2], `"body_base64":"YjE="`, `"body_base64":"YjI="`, 1)
	testkit.Declare(t, s.ch, "target", nil)
	for _, c := range []struct{ name, path, want string }{
		{"not an export", write("other.json", `{"hello":1}`+"\n"), "line 1: not a warren export"},
		{"a line that does not parse", write("broken.jsonl", lines[0]+lines[1]+"{oops\n"), "line 3"},
		{"a body whose sha256 does not match", write("tampered.jsonl", lines[0]+lines[1]+tampered), "line 3"},
		{"cut short", write("short.jsonl", lines[0]+lines[1]), "header counts 2"},
		{"a file that is not there", filepath.Join(dir, "absent.jsonl"), "no such file"},
		{"standard input", "-", "save the export to a file first"},
	} {
		_, _, err := runAction(t, s.config, newDlqImportCmd, c.path, "--to", "target", "--yes")
		if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was published") {
			t.Errorf("%s: exit %d (%v), want bad usage naming %q and nothing published", c.name, app.ExitCode(err), err, c.want)
		}
	}
	if got := testkit.Depth(t, s.ch, "target"); got != 0 {
		t.Errorf("target holds %d after refused imports, want 0", got)
	}
	// A destination that does not exist is refused before anything goes.
	if _, _, err := runAction(t, s.config, newDlqImportCmd, good, "--to", "nowhere", "--yes"); app.ExitCode(err) != app.ExitRefused {
		t.Errorf("import to a missing queue: exit %d (%v), want refused", app.ExitCode(err), err)
	}
	// A message no record gives a routing key (it was never dead-lettered)
	// cannot go by its original one: the file is refused whole.
	testkit.Declare(t, s.ch, "plain", nil)
	if err := s.ch.Publish("", "plain", false, false, amqp.Publishing{MessageId: "bare", Body: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "plain", 1)
	bare := filepath.Join(dir, "bare.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "plain", "--output", bare); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	_, _, err = runAction(t, s.config, newDlqImportCmd, bare, "--exchange", "amq.direct", "--original-routing-key", "--yes")
	if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), "message bare has no original routing key") ||
		!strings.Contains(err.Error(), "nothing was published: import with --routing-key K or --to QUEUE") {
		t.Errorf("import by original routing key of a message without one: exit %d (%v), want bad usage naming it", app.ExitCode(err), err)
	}
	for _, args := range [][]string{{good}, {good, "--to", "q", "--exchange", "x"}, {good, "--exchange", "x"}, {good, "--to", "q", "--routing-key", "k"}} {
		if _, _, err := runAction(t, s.config, newDlqImportCmd, args...); app.ExitCode(err) != app.ExitUsage {
			t.Errorf("dlq import %v: exit %d, want bad usage", args, app.ExitCode(err))
		}
	}
}

// An import killed mid-way is finished by running it again: what its
// records say was confirmed is not published twice, the rest goes.
func TestAnImportKilledMidwayIsFinishedByRunningItAgain(t *testing.T) {
	t.Parallel()
	const n = 2000
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "target", nil)
	s.killMidway(t, "target", n/4, "dlq", "import", file, "--to", "target", "--yes", "--rate", "400")
	before := testkit.Depth(t, s.ch, "target")
	if before >= n {
		t.Fatalf("the import finished (%d) before it was killed", before)
	}

	// Every message is in target; one published without a recorded
	// confirm may be there twice, and the note says how many may.
	ids, errOut := s.finishImport(t, file, "target")
	dups := 0
	for _, c := range ids {
		dups += c - 1
	}
	if len(ids) != n {
		t.Fatalf("target holds %d distinct messages, want all %d", len(ids), n)
	}
	if dups > 0 && !strings.Contains(errOut, "may exist twice") {
		t.Errorf("%d duplicates and no note of them:\n%s", dups, errOut)
	}
	if dups > 2048 {
		t.Errorf("%d duplicates, more than one confirm window", dups)
	}
	// One operation, resumed and finished.
	ops := s.importOps(t)
	if len(ops) != 1 {
		t.Fatalf("%d import operations in the audit log, want the one, resumed", len(ops))
	}
	for id, c := range ops {
		if c["intent"] != 1 || c["resumed"] != 1 || c["final"] != 1 {
			t.Errorf("operation %s: %v, want an intent, a resume and a final record", id, c)
		}
	}
}

// A hundred thousand dead letters go round: exported, purged, imported
// and exported again, the message lines are the same, byte for byte
// (the harness measures the memory: docs/BENCHMARKS.md).
func TestAHundredThousandDeadLettersGoRoundUnchanged(t *testing.T) {
	t.Parallel()
	const n = 100_000
	s := newEmptyActScene(t, "")
	s.expire(t, n, func(i int) amqp.Table { return amqp.Table{"event_id": fmt.Sprintf("E-%d", i), "n": int32(i)} })
	// Not a timed test: beside the other large runs it may take minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.jsonl.gz"), filepath.Join(dir, "second.jsonl.gz")
	if _, errOut, err := runActionCtx(ctx, s.config, newDlqExportCmd, "orders.dlq", "--output", first); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if _, err := s.ch.QueuePurge("orders.dlq", false); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	if _, errOut, err := runActionCtx(ctx, s.config, newDlqImportCmd, first, "--to", "orders.dlq", "--yes"); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", n)
	if _, errOut, err := runActionCtx(ctx, s.config, newDlqExportCmd, "orders.dlq", "--output", second); err != nil {
		t.Fatalf("second export: %v\n%s", err, errOut)
	}
	a, b := messageLines(t, first), messageLines(t, second)
	if len(a) != n || len(b) != n {
		t.Fatalf("exports of %d and %d messages, want %d each", len(a), len(b), n)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("message %d changed on its way round:\n%s\n%s", i, a[i], b[i])
		}
	}
}

// messageLines are an export's message lines, as written.
func messageLines(t *testing.T, path string) []string {
	t.Helper()
	r := openExport(t, path)
	var out []string
	for {
		m, err := r.Next()
		if err != nil {
			break
		}
		line, _ := json.Marshal(m)
		out = append(out, string(line))
	}
	return out
}

// amqplib, as a Node consumer (rascal) reads them, sees the imported
// messages as it sees the originals: the same body, content type and
// headers, in the types amqplib reads them in (x-death and the broker's
// x-first-death-*/x-last-death-* aside: the originals never died).
func TestAmqplibReadsAnImportedMessageAsTheOriginal(t *testing.T) {
	const n = 3
	s := newEmptyActScene(t, "")
	var msgs []amqp.Publishing
	for i := range n {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), ContentType: "application/json",
			Headers: typedHeaders(i), Body: []byte(fmt.Sprintf(`{"id":%d}`, i))})
	}
	received := func() map[string]map[string]any {
		r := testkit.RunRascal(t, s.vhost, "receive", n)
		out := map[string]map[string]any{}
		for _, line := range r.Lines {
			var got struct {
				Received map[string]any `json:"received"`
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			id, _ := got.Received["id"].(string)
			out[id] = got.Received
		}
		if len(out) != n {
			t.Fatalf("rascal received %d distinct messages, want %d: %v", len(out), n, r.Lines)
		}
		return out
	}
	// The originals, straight into orders.
	for _, m := range msgs {
		if err := s.ch.Publish("", "orders", false, false, m); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders", n)
	want := received()

	// The same messages dead-lettered, exported, purged, imported into
	// orders.
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", msgs)
	file := filepath.Join(t.TempDir(), "e.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", file); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if _, err := s.ch.QueuePurge("orders.dlq", false); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "orders", "--yes"); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders", n)
	got := received()
	for id, w := range want {
		g := got[id]
		if g["body"] != w["body"] || g["contentType"] != w["contentType"] {
			t.Errorf("%s: amqplib read %v / %v, the original %v / %v", id, g["body"], g["contentType"], w["body"], w["contentType"])
		}
		gh, _ := g["headers"].(map[string]any)
		for k := range gh {
			if k == "x-death" || strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-") {
				delete(gh, k)
			}
		}
		if !reflect.DeepEqual(gh, w["headers"]) {
			t.Errorf("%s: amqplib read the imported headers as\n%v\nthe original's as\n%v", id, gh, w["headers"])
		}
	}
}

// --rate auto paces an import by the destination's consumers, as it
// paces a replay, and refuses a destination nobody consumes.
func TestDlqImportAtTheConsumersPace(t *testing.T) {
	t.Parallel()
	const n = 300
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "target", nil)
	if _, _, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--rate", "auto", "--yes"); app.ExitCode(err) != app.ExitRefused ||
		!strings.Contains(err.Error(), "no consumer") {
		t.Fatalf("--rate auto with nobody consuming: exit %d (%v), want refused", app.ExitCode(err), err)
	}
	cons := testkit.Channel(t, testkit.Dial(t, s.vhost))
	deliveries, err := cons.Consume("target", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int)
	go func() {
		c := 0
		for range deliveries {
			if c++; c == n {
				got <- c
			}
		}
	}()
	out, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--rate", "auto", "--yes", "--json")
	if err != nil {
		t.Fatalf("import --rate auto: %v\n%s", err, errOut)
	}
	var res struct {
		Confirmed int `json:"confirmed"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Confirmed != n {
		t.Fatalf("import --rate auto: %q (%v), want %d confirmed", out, err, n)
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer did not receive every imported message")
	}
}

// exported has the broker dead-letter n messages into orders.dlq, and
// exports them to a file.
func exported(t *testing.T, n int) (*actScene, string) {
	t.Helper()
	s := newEmptyActScene(t, "")
	s.expire(t, n, nil)
	file := filepath.Join(t.TempDir(), "orders.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", file); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	return s, file
}

// finishImport runs the import of file into dest again, as an operator
// finishing an interrupted one does, and takes what dest then holds:
// how many times each message ID is there. errOut is what it noted.
func (s *actScene) finishImport(t *testing.T, file, dest string) (map[string]int, string) {
	t.Helper()
	out, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", dest, "--yes")
	if err != nil {
		t.Fatalf("the second run: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "not published again") {
		t.Fatalf("the second run did not finish the first: %q", out)
	}
	return s.countIDs(t, dest), errOut
}

// importOps counts each import operation's records by outcome.
func (s *actScene) importOps(t *testing.T) map[string]map[string]int {
	t.Helper()
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ops := map[string]map[string]int{}
	if err := st.Scan(t.Context(), func(r audit.Record) error {
		if r.Action == "import" {
			if ops[r.Operation] == nil {
				ops[r.Operation] = map[string]int{}
			}
			ops[r.Operation][r.Outcome]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ops
}

// An import the operator interrupts (ctrl+c, SIGTERM) is not finished:
// its file keeps every message, so the operation stays open and the same
// command finishes it without publishing the confirmed ones again. A
// `dlq resume` of the queue the file was exported from never takes it
// up: that queue holds other messages.
func TestAnImportInterruptedIsFinishedByRunningItAgain(t *testing.T) {
	t.Parallel()
	const n = 2000
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "target", nil)
	stderr, err := s.signalMidway(t, syscall.SIGINT, "target", n/4, "dlq", "import", file, "--to", "target", "--yes", "--rate", "400")
	if err == nil || !strings.Contains(stderr, "is left open") || !strings.Contains(stderr, "run the same `warren dlq import` again") {
		t.Fatalf("the interrupted import exited %v, saying:\n%s\nwant a failure that says it is left open and how to finish it", err, stderr)
	}
	before := testkit.Depth(t, s.ch, "target")
	ops := s.importOps(t)
	if len(ops) != 1 {
		t.Fatalf("%d import operations, want 1", len(ops))
	}
	var id string
	for op, c := range ops {
		if id = op; c["final"] != 0 {
			t.Fatalf("the interrupted import was closed with a final record: %v", c)
		}
	}

	// dlq resume reads a queue: it does not take the import up, by the
	// queue's name or by the operation's, and moves nothing.
	if _, _, err := runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes"); err == nil {
		t.Error("dlq resume of the export's queue succeeded; want nothing to resume there")
	}
	if _, _, err := runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--operation", id, "--yes"); err == nil || !strings.Contains(err.Error(), "is an import") {
		t.Errorf("dlq resume --operation %s: %v, want a refusal naming the import", id, err)
	}
	if got, dlq := testkit.Depth(t, s.ch, "target"), testkit.Depth(t, s.ch, "orders.dlq"); got != before || dlq != n {
		t.Fatalf("after the refused resumes target holds %d (was %d) and orders.dlq %d (want %d)", got, before, dlq, n)
	}

	// Run again to another destination, it is refused, naming both in
	// words, and publishes nothing.
	testkit.Declare(t, s.ch, "elsewhere", nil)
	_, _, err = runAction(t, s.config, newDlqImportCmd, file, "--to", "elsewhere", "--yes")
	if err == nil || !strings.Contains(err.Error(), "interrupted publishing to queue target (default exchange), not queue elsewhere (default exchange)") {
		t.Errorf("the import run again to another queue: %v; want a refusal naming both queues", err)
	}
	if got := testkit.Depth(t, s.ch, "elsewhere"); got != 0 {
		t.Fatalf("the refused import published %d messages", got)
	}

	// The interrupted run settled what it had in flight, so every
	// confirm was recorded: nothing is there twice.
	ids, _ := s.finishImport(t, file, "target")
	for id, c := range ids {
		if c != 1 {
			t.Errorf("message %s is in target %d times", id, c)
		}
	}
	if len(ids) != n {
		t.Fatalf("target holds %d distinct messages, want all %d", len(ids), n)
	}
	c := s.importOps(t)[id]
	if c["intent"] != 1 || c["resumed"] != 1 || c["final"] != 1 {
		t.Errorf("operation %s: %v, want an intent, a resume and a final record", id, c)
	}
}

// An import its destination stops (a full queue refusing with a nack)
// stays open too: once the destination takes messages again, running it
// again publishes what was not confirmed, and nothing twice.
func TestAnImportItsDestinationStoppedIsFinishedWithoutDuplicates(t *testing.T) {
	const n, room = 100, 40
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "small", amqp.Table{"x-max-length": int32(room), "x-overflow": "reject-publish"})
	_, _, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "small", "--yes")
	if err == nil || !strings.Contains(err.Error(), "refused a copy") || !strings.Contains(err.Error(), "the rest is not published") ||
		!strings.Contains(err.Error(), "is left open") || strings.Contains(err.Error(), "stays in orders.dlq") {
		t.Fatalf("an import into a full queue: %v; want the nack, the rest not published and the operation left open", err)
	}
	first := s.countIDs(t, "small")
	if len(first) != room {
		t.Fatalf("small took %d messages, want %d", len(first), room)
	}
	if _, err := s.ch.QueueDelete("small", false, false, false); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, s.ch, "small", nil)
	second, _ := s.finishImport(t, file, "small")
	for id := range second {
		if first[id] > 0 {
			t.Errorf("message %s was published by both runs", id)
		}
	}
	if len(first)+len(second) != n {
		t.Errorf("the two runs published %d and %d distinct messages, want %d in all", len(first), len(second), n)
	}
}

// The same export in another file — compressed after the first try, say
// — is the same import: running it finishes the interrupted one, naming
// the file it started from, and nothing is published twice.
func TestAnImportInterruptedIsFinishedFromACompressedCopyOfItsFile(t *testing.T) {
	const n, room = 50, 20
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "small", amqp.Table{"x-max-length": int32(room), "x-overflow": "reject-publish"})
	if _, _, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "small", "--yes"); err == nil || !strings.Contains(err.Error(), "is left open") {
		t.Fatalf("an import into a full queue: %v; want it left open", err)
	}
	first := s.countIDs(t, "small")
	if _, err := s.ch.QueueDelete("small", false, false, false); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, s.ch, "small", nil)
	gz := gzipCopy(t, file)
	out, errOut, err := runAction(t, s.config, newDlqImportCmd, gz, "--to", "small", "--dry-run")
	if err != nil || !strings.Contains(out, "finish import") || !strings.Contains(out, "from "+file+", the same export") {
		t.Fatalf("the plan of the compressed copy: %v, %q\n%s; want it to finish the first import, naming its file", err, out, errOut)
	}
	out, errOut, err = runAction(t, s.config, newDlqImportCmd, gz, "--to", "small", "--yes")
	if err != nil || !strings.Contains(out, "20 confirmed before the interruption and not published again") {
		t.Fatalf("the import of the compressed copy: %v, %q\n%s", err, out, errOut)
	}
	second := s.countIDs(t, "small")
	for id := range second {
		if first[id] > 0 {
			t.Errorf("message %s was published by both runs", id)
		}
	}
	if len(first)+len(second) != n {
		t.Errorf("the two runs published %d and %d distinct messages, want %d in all", len(first), len(second), n)
	}
	// Finished now: importing the copy again names the import of the
	// same export, which read the first file.
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, gz, "--to", "small", "--dry-run"); err != nil ||
		!strings.Contains(errOut, "this export was (from "+file+") imported into vhost "+s.vhost+" before") {
		t.Errorf("a third import's plan: %v\n%s; want the finished import of the copy named", err, errOut)
	}
}

// An import whose destination is gone for good is not a trap: the
// refusal to finish it elsewhere names --start-over, which publishes the
// whole file there, says what the interrupted one left behind, and takes
// its place as the file's import.
func TestAnImportStartsOverElsewhereWhenItsDestinationIsGone(t *testing.T) {
	const n, room = 50, 20
	s, file := exported(t, n)
	testkit.Declare(t, s.ch, "small", amqp.Table{"x-max-length": int32(room), "x-overflow": "reject-publish"})
	if _, _, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "small", "--yes"); err == nil || !strings.Contains(err.Error(), "is left open") {
		t.Fatalf("an import into a full queue: %v; want it left open", err)
	}
	if _, err := s.ch.QueueDelete("small", false, false, false); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, s.ch, "elsewhere", nil)
	_, _, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "elsewhere", "--yes")
	if err == nil || !strings.Contains(err.Error(), "or add --start-over to publish the whole file to queue elsewhere (default exchange), leaving that import unfinished") {
		t.Fatalf("the import to another queue: %v; want the refusal to name --start-over", err)
	}
	var first string
	for op := range s.importOps(t) {
		first = op
	}
	out, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "elsewhere", "--start-over", "--yes")
	if err != nil {
		t.Fatalf("import --start-over: %v\n%s", err, errOut)
	}
	if want := "import " + first + " of this file into vhost " + s.vhost; !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, "20 messages recorded confirmed to queue small (default exchange)) is not finished — interrupted, or still running elsewhere: running this one closes it as cancelled") {
		t.Errorf("import --start-over warned:\n%s\nwant the interrupted import named with what it confirmed", errOut)
	}
	if strings.Contains(out, "not published again") {
		t.Errorf("import --start-over finished the interrupted import: %q", out)
	}
	if ids := s.countIDs(t, "elsewhere"); len(ids) != n {
		t.Fatalf("elsewhere holds %d distinct messages, want the whole file's %d", len(ids), n)
	}
	ops := s.importOps(t)
	if len(ops) != 2 || ops[first]["final"] != 1 {
		t.Fatalf("import operations %v: want the interrupted one closed by a final record, and a second", ops)
	}
	// It is closed as cancelled, by what its records confirmed.
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var closed *audit.Record
	_ = st.Scan(t.Context(), func(r audit.Record) error {
		if r.Operation == first && r.Outcome == "final" {
			rr := r
			closed = &rr
		}
		return nil
	})
	if closed == nil || closed.Detail["cancelled"] != "true" || closed.Detail["confirmed"] != "20" || !strings.Contains(closed.Detail["note"], "--start-over") {
		t.Errorf("the replaced import's final record: %+v; want it cancelled, 20 confirmed, naming --start-over", closed)
	}
	// The new import is now the file's: importing again names it as
	// finished, and no longer offers to finish the first.
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "elsewhere", "--dry-run"); err != nil ||
		!strings.Contains(errOut, "this file was imported into vhost "+s.vhost+" before") || strings.Contains(errOut, first) {
		t.Errorf("a third import's plan: %v\n%s", err, errOut)
	}
}

// A file imported before is named as such when imported again: running
// it again publishes every message again, which the operator must know.
func TestAFileImportedBeforeIsNamedWhenImportedAgain(t *testing.T) {
	s, file := exported(t, 3)
	testkit.Declare(t, s.ch, "target", nil)
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--dry-run"); err != nil || strings.Contains(errOut, "imported into") {
		t.Fatalf("a first import's plan: %v\n%s", err, errOut)
	}
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--yes"); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	var id string
	for op := range s.importOps(t) {
		id = op
	}
	out, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--dry-run")
	if err != nil || !strings.Contains(errOut, "this file was imported into vhost "+s.vhost+" before (operation "+id) ||
		!strings.Contains(errOut, "3 confirmed") || !strings.Contains(errOut, "publishes every message again") {
		t.Fatalf("the second import's plan: %v\n%s\n%s; want the first import named", err, out, errOut)
	}
	if !strings.Contains(out, "into vhost "+s.vhost+", to queue target") {
		t.Errorf("the plan does not say where the messages go: %q", out)
	}
	if !strings.Contains(errOut, "(a run needs --start-over)") {
		t.Errorf("the second import's plan does not say a run needs --start-over:\n%s", errOut)
	}
	// Run again, as "run the same command again" says after an
	// interruption, it is refused: it would publish the file twice.
	_, _, err = runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--yes")
	if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), "nothing was published: add --start-over to publish it again all the same") {
		t.Fatalf("importing a finished file again: exit %d (%v), want it refused naming --start-over", app.ExitCode(err), err)
	}
	if got := testkit.Depth(t, s.ch, "target"); got != 3 {
		t.Fatalf("target holds %d after the refused import, want the first import's 3", got)
	}
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--yes", "--start-over"); err != nil {
		t.Fatalf("import --start-over of a finished file: %v\n%s", err, errOut)
	}
	if got := testkit.Depth(t, s.ch, "target"); got != 6 {
		t.Errorf("target holds %d after the import again, want 6", got)
	}
}

// An import names the export of the audit log that wrote its file, and
// says when the file is no longer what it wrote; its intent records
// that export.
func TestAnImportNamesTheExportThatWroteItsFile(t *testing.T) {
	t.Parallel()
	s, file := exported(t, 3)
	testkit.Declare(t, s.ch, "target", nil)
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	export, _, err := st.Last(t.Context())
	if err != nil || export.Action != "export" {
		t.Fatalf("the export's record: %+v (%v)", export, err)
	}
	abs, _ := filepath.Abs(file)
	_, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--dry-run")
	if want := "note: this file is what export " + export.Operation + " ("; err != nil || !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, "orders.dlq in vhost "+s.vhost) || !strings.Contains(errOut, "written to "+abs+") wrote, unchanged") {
		t.Errorf("the plan of the exported file: %v\n%s; want its export named", err, errOut)
	}
	gz := gzipCopy(t, file)
	_, errOut, err = runAction(t, s.config, newDlqImportCmd, gz, "--to", "target", "--dry-run")
	if err != nil || !strings.Contains(errOut, "note: this file holds export "+export.Operation+" (") ||
		!strings.Contains(errOut, "but its bytes differ from what that export wrote") {
		t.Errorf("the plan of a compressed copy: %v\n%s; want the export named, and the bytes said to differ", err, errOut)
	}
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--to", "target", "--yes"); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	var named []string
	if err := st.Scan(t.Context(), func(r audit.Record) error {
		if r.Action == "import" && r.Outcome == "intent" {
			named = append(named, r.Detail["export_operation"])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(named) != 1 || named[0] != export.Operation {
		t.Errorf("the import's intent names export %q, want %s", named, export.Operation)
	}
}

// gzipCopy writes file gzipped beside it, as FILE.gz, and returns its
// name: the same export, another file.
func gzipCopy(t *testing.T, file string) string {
	t.Helper()
	plain, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(plain); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	gz := file + ".gz"
	if err := os.WriteFile(gz, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return gz
}
