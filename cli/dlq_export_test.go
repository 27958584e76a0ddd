//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/testkit"
)

// typedHeaders carries a header of every AMQP field type the Go client
// writes, nested tables and arrays included.
func typedHeaders(i int) amqp.Table {
	return amqp.Table{
		"event_id": fmt.Sprintf("E-%d", i),
		"bool":     true, "int8": int8(-8), "uint8": uint8(8), "int16": int16(-16), "uint16": uint16(16),
		"int32": int32(-32), "uint32": uint32(32), "int64": int64(-64), "float32": float32(1.5), "float64": 2.25,
		"decimal": amqp.Decimal{Scale: 2, Value: 1999}, "bytes": []byte{0, 1, 0xfe, 0xff},
		"timestamp": time.Unix(1700000000, 0).UTC(), "void": nil,
		"table": amqp.Table{"inner": "x", "n": int32(1), "deeper": amqp.Table{"ok": false}},
		"array": []any{"a", int32(2), amqp.Table{"k": "v"}},
	}
}

func TestDlqExportWritesEveryMessageTypedAndKeepsTheQueue(t *testing.T) {
	s := newEmptyActScene(t, "")
	bodies := [][]byte{
		[]byte(`{"id":0}`),
		{0x00, 0x01, 0xff, 0xfe, 0x80}, // not UTF-8
		bytes.Repeat([]byte("x"), 4<<20),
	}
	var msgs []amqp.Publishing
	for i, b := range bodies {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), ContentType: "application/octet-stream", DeliveryMode: 2,
			Priority: 3, CorrelationId: "c", ReplyTo: "r", Type: "t", AppId: "app", Timestamp: time.Unix(1700000001, 0).UTC(),
			Headers: typedHeaders(i), Body: b})
	}
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", msgs)

	for _, name := range []string{"orders.jsonl", "orders.jsonl.gz"} {
		out := filepath.Join(t.TempDir(), name)
		stdout, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--json")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, errOut)
		}
		var sum exportJSON
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Count != 3 || sum.Read != 3 || sum.SHA256 == "" {
			t.Fatalf("%s: summary %q (%v), want 3 messages and the file's sha256", name, stdout, err)
		}
		if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want a file only its owner reads (bodies may be private)", name, err, info.Mode().Perm())
		}
		// The summary's sha256 and size are the file's, and nothing else
		// is left beside it.
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(raw); hex.EncodeToString(got[:]) != sum.SHA256 || sum.Bytes != int64(len(raw)) {
			t.Errorf("%s: summary says sha256 %s, %d bytes; the file has %x, %d", name, sum.SHA256, sum.Bytes, got, len(raw))
		}
		if entries, err := os.ReadDir(filepath.Dir(out)); err != nil || len(entries) != 1 {
			t.Errorf("%s: the directory holds %v (%v), want the file alone", name, entries, err)
		}
		if name == "orders.jsonl" {
			// Written in place: its header fills the place kept for the
			// longest one, blanks before the newline.
			first, _, _ := bytes.Cut(raw, []byte("\n"))
			if trimmed := bytes.TrimRight(first, " "); !json.Valid(trimmed) || bytes.Contains(trimmed, []byte("\n")) || len(first)-len(trimmed) > 40 {
				t.Errorf("%s: header line %q", name, first)
			}
		}
		r := openExport(t, out)
		if h := r.Header; h.Queue != "orders.dlq" || h.Vhost != s.vhost || h.Count != 3 || h.Broker == "" || h.Warren == "" {
			t.Errorf("%s: header %+v", name, h)
		}
		for i := range msgs {
			m, err := r.Next()
			if err != nil {
				t.Fatalf("%s: message %d: %v", name, i, err)
			}
			p := m.Publishing
			if !bytes.Equal(p.Body, bodies[i]) || p.MessageId != msgs[i].MessageId || p.Priority != 3 || p.DeliveryMode != 2 ||
				!p.Timestamp.Equal(msgs[i].Timestamp) || p.AppId != "app" || m.LogicalID == "" || m.Reason != "rejected" || m.OriginQueue != "orders" {
				t.Errorf("%s: message %d read back as %+v", name, i, m)
			}
			for k, want := range typedHeaders(i) {
				if got := p.Headers[k]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: message %d header %s = %#v, want %#v", name, i, k, got, want)
				}
			}
			if _, ok := p.Headers["x-death"].([]any); !ok {
				t.Errorf("%s: message %d has no x-death array: %#v", name, i, p.Headers["x-death"])
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: after the last message: %v, want EOF", name, err)
		}
	}
	// Nothing left the queue, and its order is kept.
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	if ids := s.messageIDs(t, "orders.dlq", 3); fmt.Sprint(ids) != "[m-0 m-1 m-2]" {
		t.Errorf("after the exports the DLQ holds %v", ids)
	}
}

// openExport reads the export file at path; it closes with the test.
func openExport(t *testing.T, path string) *dlqfile.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := dlqfile.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// The headers come back with their types on the wire too: the decoded
// publishing, published and consumed, carries what the original did.
func TestAnExportedMessagePublishedAgainKeepsItsHeaderTypes(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-0", Headers: typedHeaders(0), Body: []byte("b")}})
	out := filepath.Join(t.TempDir(), "e.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	m, err := openExport(t, out).Next()
	if err != nil {
		t.Fatal(err)
	}
	p := m.Publishing
	testkit.Declare(t, s.ch, "again", nil)
	if err := s.ch.PublishWithContext(context.Background(), "", "again", false, false, p); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "again", 1)
	d, ok, err := s.ch.Get("again", true)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	for k, want := range typedHeaders(0) {
		if got := d.Headers[k]; !sameValue(got, want) {
			t.Errorf("header %s came back as %#v, want %#v", k, got, want)
		}
	}
}

// sameValue compares field values as the wire keeps them: a timestamp
// by its instant (the client reads it in local time).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case amqp.Table:
		y, ok := b.(amqp.Table)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !sameValue(x[k], y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestDlqExportRefusesWhatItCannotDo(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-0", Body: []byte("b")}})
	for _, args := range [][]string{
		{"orders.dlq"},
		{"orders.dlq", "--output", "-", "--json"},
		{"orders.dlq", "--output", "x.jsonl", "--limit", "-1"},
		{"orders.dlq", "--output", "x.jsonl", "--filter", "reason =="},
	} {
		if _, _, err := runAction(t, s.config, newDlqExportCmd, args...); app.ExitCode(err) != app.ExitUsage {
			t.Errorf("dlq export %v: exit %d (%v), want bad usage", args, app.ExitCode(err), err)
		}
	}
	// A queue that does not exist writes nothing.
	out := filepath.Join(t.TempDir(), "none.jsonl")
	if _, _, err := runAction(t, s.config, newDlqExportCmd, "nope.dlq", "--output", out); err == nil {
		t.Error("exporting a missing queue succeeded")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed export left %s: %v", out, err)
	}
	// A directory that is not there is named, before anything is read.
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	_, _, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", filepath.Join(missing, "x.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "cannot write a file in "+missing+" (no such file or directory): nothing was read") || app.ExitCode(err) != app.ExitUsage {
		t.Errorf("export into a missing directory: exit %d (%v), want bad usage naming it", app.ExitCode(err), err)
	}
}

// An earlier export may be the only copy of messages purged since: an
// export does not replace a file unless told to, and says so before it
// reads anything.
func TestAnExportDoesNotReplaceAFileWithoutForce(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-0", Body: []byte("first")}})
	for _, name := range []string{"orders.jsonl", "orders.jsonl.gz"} {
		dir := t.TempDir()
		out := filepath.Join(dir, name)
		if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, errOut)
		}
		before, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out)
		if app.ExitCode(err) != app.ExitRefused || !strings.Contains(fmt.Sprint(err), out+" already exists") ||
			!strings.Contains(fmt.Sprint(err), "--force") || !strings.Contains(fmt.Sprint(err), "nothing was read from orders.dlq") {
			t.Fatalf("%s: export over an earlier one: exit %d (%v), want refused, naming the file and --force", name, app.ExitCode(err), err)
		}
		if after, _ := os.ReadFile(out); !bytes.Equal(after, before) {
			t.Fatalf("%s: the refused export changed the earlier file", name)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("%s: the refused export left %d files in its directory, want the earlier export alone", name, len(entries))
		}
		// A directory is no file to write, forced or not.
		for _, args := range [][]string{{"orders.dlq", "--output", dir}, {"orders.dlq", "--output", dir, "--force"}} {
			if _, _, err := runAction(t, s.config, newDlqExportCmd, args...); app.ExitCode(err) != app.ExitUsage || !strings.Contains(fmt.Sprint(err), "is a directory") {
				t.Errorf("%s: dlq export %v: exit %d (%v), want bad usage naming the directory", name, args, app.ExitCode(err), err)
			}
		}
	}
	// --force replaces it with what the queue holds now.
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-1", Body: []byte("second")}})
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--force"); err != nil {
		t.Fatalf("--force: %v\n%s", err, errOut)
	}
	if r := openExport(t, out); r.Header.Count != 2 {
		t.Fatalf("--force left a file of %d messages, want the new export of 2", r.Header.Count)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 2)
}

// An export says what the queue holds that is not in the file: here a
// consumer holding a message unacknowledged, which no reader sees. The
// file is written all the same, and --json counts it for scripts.
func TestAnExportSaysWhatIsNotInTheFile(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{
		{MessageId: "m-0", Body: []byte("a")}, {MessageId: "m-1", Body: []byte("b")}})
	holder := testkit.Channel(t, testkit.Dial(t, s.vhost))
	if err := holder.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	held, err := holder.Consume("orders.dlq", "holder", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-held
	testkit.WaitUnacked(t, s.vhost, "orders.dlq", 1)
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	stdout, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--json")
	if app.ExitCode(err) != app.ExitFailure {
		t.Fatalf("exit %d (%v), want 1: the queue holds a message the file does not\n%s", app.ExitCode(err), err, errOut)
	}
	var sum exportJSON
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Count != 1 || sum.Consumers != 1 || sum.Held != 1 || sum.Unread != 0 {
		t.Fatalf("summary %q (%v), want 1 message, 1 consumer and the 1 it holds", stdout, err)
	}
	for _, want := range []string{
		"warning: 1 message is held unacknowledged by another client",
		"they are in orders.dlq and not in the file",
		"warning: orders.dlq has 1 consumer: messages a consumer holds unacknowledged are not in the file",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	}
	// --limit asks for part of the queue: nothing to warn of.
	_, errOut, err = runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--force", "--limit", "1")
	if err != nil || strings.Contains(errOut, "warning") {
		t.Errorf("an export with --limit: %v, stderr %q", err, errOut)
	}
}

// An export cut by --limit on a queue that holds more is no copy of the
// queue: it says how many messages it did not read and exits 1, so
// `export --limit N && purge` stops before a purge takes them. A limit
// the queue does not exceed is an export of every message, as before.
func TestAnExportCutByItsLimitSaysWhatItDidNotRead(t *testing.T) {
	s := newEmptyActScene(t, "")
	var msgs []amqp.Publishing
	for i := range 5 {
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte{byte('a' + i)}})
	}
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", msgs)
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	stdout, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--limit", "2", "--json")
	if app.ExitCode(err) != app.ExitFailure || !app.IsQuiet(err) {
		t.Fatalf("exit %d (%v), want 1: the queue holds 3 messages past --limit that the file does not\n%s", app.ExitCode(err), err, errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil || raw["read"] != 2.0 || raw["count"] != 2.0 || raw["past_limit"] != 3.0 || raw["held"] != 0.0 {
		t.Fatalf("summary %q (%v), want 2 read and written, 3 past the limit", stdout, err)
	}
	for _, k := range []string{"vhost", "queue", "output", "read", "count", "bytes", "sha256", "unread", "consumers", "held", "past_limit", "operation"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("summary %q lacks %q", stdout, k)
		}
	}
	if want := "warning: --limit 2 reached: 3 more in orders.dlq were not read and are not in the file"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if r := openExport(t, out); r.Header.Count != 2 {
		t.Errorf("the file holds %d messages, want the 2 read", r.Header.Count)
	}
	// In text, the same warning and exit.
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
	_, errOut, err = runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--force", "--limit", "4")
	if app.ExitCode(err) != app.ExitFailure || !strings.Contains(errOut, "warning: --limit 4 reached: 1 more in orders.dlq was not read and is not in the file") {
		t.Errorf("--limit 4 of 5: exit %d (%v), stderr %q", app.ExitCode(err), err, errOut)
	}
	// A limit the queue does not exceed leaves nothing out.
	for _, limit := range []string{"5", "6"} {
		testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
		stdout, errOut, err = runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--force", "--limit", limit, "--json")
		raw = nil
		if jerr := json.Unmarshal([]byte(stdout), &raw); err != nil || jerr != nil || strings.Contains(errOut, "warning") || raw["count"] != 5.0 || raw["unread"] != 0.0 {
			t.Errorf("--limit %s of 5: %v, summary %q, stderr %q", limit, err, stdout, errOut)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
}

// A group or filter that chooses none of the messages gives a file of
// nothing: said, and exit 1, so `export && purge` does not go on to
// purge what it was to keep. One that chooses some is no warning.
func TestAnExportThatChoseNothingSaysSoAndExitsOne(t *testing.T) {
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-0", Body: []byte("a")}, {MessageId: "m-1", Body: []byte("b")}})
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	for _, args := range [][]string{{"--group", "deadbeef00"}, {"--filter", `message_id == "nope"`}} {
		_, errOut, err := runAction(t, s.config, newDlqExportCmd, append([]string{"orders.dlq", "--output", out, "--force"}, args...)...)
		if app.ExitCode(err) != app.ExitFailure || !strings.Contains(errOut, "chose none of the 2 messages read from orders.dlq: the file holds no message") {
			t.Errorf("export %v: exit %d (%v), stderr %q; want 1 and the empty selection said", args, app.ExitCode(err), err, errOut)
		}
		testkit.WaitDepth(t, s.ch, "orders.dlq", 2)
	}
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--force", "--filter", `message_id == "m-1"`); err != nil || strings.Contains(errOut, "warning") {
		t.Errorf("a filter that chose one: %v, stderr %q", err, errOut)
	}
}

// An export is in the audit log: one record naming the file by its
// sha256 and counting what it took, which `audit tail` shows as done. A
// log that cannot be written takes nothing from a complete file: the
// export says so on stderr and keeps its exit code.
func TestAnExportIsAuditedAndALogThatCannotBeWrittenKeepsTheFile(t *testing.T) {
	t.Parallel()
	s := newActScene(t, 2, "")
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	stdout, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", out, "--filter", `reason == "rejected"`, "--json")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	var sum exportJSON
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Operation == "" {
		t.Fatalf("summary %q (%v), want the audit operation", stdout, err)
	}
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, _, err := st.Last(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(out)
	d := last.Detail
	if last.Action != ops.ActionExport || last.Operation != sum.Operation || last.Outcome != domain.OutcomeFinal ||
		last.Queue != "orders.dlq" || last.Vhost != s.vhost || last.Target != abs ||
		d["file_sha256"] != sum.SHA256 || d["exported"] != "2" || d["read"] != "2" || d["filter"] != `reason == "rejected"` ||
		d["bytes"] != fmt.Sprint(sum.Bytes) || d["export_id"] != openExport(t, out).Header.ID() {
		t.Errorf("the export's record: %+v", last)
	}
	if res, err := audit.Verify(context.Background(), st); err != nil || !res.OK {
		t.Errorf("the chain after an export: %+v %v", res, err)
	}
	tail, _, err := runAction(t, s.config, newAuditCmd, "tail")
	if err != nil || !strings.Contains(tail, "done        export") || !strings.Contains(tail, "selected 2  exported 2") {
		t.Errorf("audit tail after an export (%v):\n%s", err, tail)
	}

	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.config, []byte(strings.Replace(string(text), s.audit, filepath.Join(blocker, "audit.jsonl"), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.jsonl")
	stdout, errOut, err = runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", again)
	if err != nil {
		t.Fatalf("an export beside a log that cannot be written: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "warning: the export is complete but not in the audit log: ") || strings.Contains(stdout, "audit operation") {
		t.Errorf("stdout %q, stderr %q: want the missing record said", stdout, errOut)
	}
	if r := openExport(t, again); r.Header.Count != 2 {
		t.Errorf("the file beside a log that cannot be written holds %d messages, want 2", r.Header.Count)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 2)
}
