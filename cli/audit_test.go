package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// auditApp is an App whose context keeps its audit log at a fresh file.
func auditApp(t *testing.T) (*App, *bytes.Buffer, *bytes.Buffer, string) {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "warren.toml")
	text := fmt.Sprintf("current_context = \"t\"\n[contexts.t]\naudit = \"file:%s\"\n", logPath)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	return &App{ConfigPath: cfg, Out: &out, Err: &errOut}, &out, &errOut, logPath
}

func runAudit(ctx context.Context, a *App, args ...string) error {
	cmd := newAuditCmd(a)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(a.Out)
	cmd.SetErr(a.Err)
	return cmd.ExecuteContext(ctx)
}

// writeOperation appends one replay: intent, outcomes, and the final record
// unless finish is false.
func writeOperation(t *testing.T, path, id, queue string, finish bool) {
	t.Helper()
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	op := audit.Op{ID: id, Action: "replay", Operator: "ana", Vhost: "/", Queue: queue, Target: "orders"}
	recs := []audit.Record{
		op.Intent(audit.Plan{Selected: 3, Destinations: []string{"orders"}}),
		op.Outcome(domain.OutcomeConfirmed, []string{"m1", "m2"}, []string{"e1", "e2"}, nil),
		op.Outcome(domain.OutcomeReturned, []string{"m3"}, []string{"e3"}, nil),
	}
	if finish {
		recs = append(recs, op.Final(map[string]int{domain.OutcomeConfirmed: 2, domain.OutcomeReturned: 1}))
	}
	for _, r := range recs {
		if _, err := st.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAuditVerifyReportsAnIntactAndABrokenChain(t *testing.T) {
	a, out, _, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	if err := runAudit(context.Background(), a, "verify"); err != nil {
		t.Fatalf("verify: %v", err)
	}
	last := lastRecord(t, path)
	if got, want := out.String(), "ok: 4 records, chain intact\nhead seq 4 sha256:"+last.Hash+"\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(raw, []byte(`"m3"`), []byte(`"m4"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := runAudit(context.Background(), a, "verify")
	if app.ExitCode(err) != app.ExitFailure {
		t.Fatalf("broken chain: exit %d (%v), want %d", app.ExitCode(err), err, app.ExitFailure)
	}
	if got := out.String(); !strings.HasPrefix(got, "broken at seq 3: hash mismatch") {
		t.Fatalf("output %q", got)
	}
	// stdout gave the reason; the error names the log and does not say it again.
	if msg := err.Error(); !strings.Contains(msg, path) || strings.Contains(msg, "hash mismatch") {
		t.Fatalf("error %q: want the log's path, without the reason stdout gave", msg)
	}
}

// lastRecord is the last record of the file store at path.
func lastRecord(t *testing.T, path string) audit.Record {
	t.Helper()
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := st.Last(context.Background())
	if err != nil || !ok {
		t.Fatalf("last record of %s: %v %v", path, ok, err)
	}
	return r
}

func TestAuditVerifyChecksTheKeptHead(t *testing.T) {
	a, out, errOut, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	kept := lastRecord(t, path) // seq 4, the ticket's anchor
	writeOperation(t, path, "op-2", "orders.dlq", true)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	truncate := func(n int) {
		t.Helper()
		if err := os.WriteFile(path, bytes.Join(lines[:n], nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	head8 := "head seq 8 sha256:" + lastRecord(t, path).Hash
	arg := fmt.Sprintf("%d:sha256:%s", kept.Seq, kept.Hash)
	tests := []struct {
		name    string
		before  func()
		args    []string
		code    int
		want    string
		wantErr string
	}{
		{name: "the kept head is there", args: []string{"--expect-head", arg}, code: app.ExitOK,
			want: "ok: 8 records, chain intact\nthe expected head seq 4 is there, and 4 records follow it\n" + head8 + "\n"},
		{name: "the hash without its prefix", args: []string{"--expect-head", fmt.Sprintf("%d:%s", kept.Seq, kept.Hash)}, code: app.ExitOK,
			want: "ok: 8 records, chain intact\nthe expected head seq 4 is there, and 4 records follow it\n" + head8 + "\n"},
		{name: "another hash at the kept seq", args: []string{"--expect-head", "4:" + strings.Repeat("0", 64)}, code: app.ExitFailure,
			want:    "the record at seq 4 has hash sha256:" + kept.Hash[:12] + "…, not the expected sha256:000000000000…: the log was rewritten\n" + head8 + "\n",
			wantErr: "failed verification"},
		{name: "a head past the end", args: []string{"--expect-head", "9:" + kept.Hash}, code: app.ExitFailure,
			want:    "the log ends at seq 8, before the expected head seq 9: records were removed from its end\n" + head8 + "\n",
			wantErr: "failed verification"},
		{name: "the last operation deleted", before: func() { truncate(4) }, args: []string{"--expect-head", "8:" + strings.TrimPrefix(head8, "head seq 8 sha256:")},
			code: app.ExitFailure, want: "the log ends at seq 4, before the expected head seq 8: records were removed from its end\nhead seq 4 sha256:" + kept.Hash + "\n"},
		{name: "the file emptied", before: func() { truncate(0) }, args: []string{"--expect-head", arg}, code: app.ExitFailure,
			want: "the log is empty, but the expected head is seq 4: its records were removed\nhead: empty log\n"},
		{name: "the file emptied, without a kept head", args: nil, code: app.ExitOK, want: "ok: 0 records, chain intact\nhead: empty log\n"},
		{name: "no seq", args: []string{"--expect-head", kept.Hash}, code: app.ExitUsage, wantErr: "want SEQ:HASH"},
		{name: "a short hash", args: []string{"--expect-head", "4:sha256:abc"}, code: app.ExitUsage, wantErr: "want SEQ:HASH"},
		{name: "empty", args: []string{"--expect-head", ""}, code: app.ExitUsage, wantErr: "want SEQ:HASH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			out.Reset()
			errOut.Reset()
			err := runAudit(context.Background(), a, append([]string{"verify"}, tt.args...)...)
			if app.ExitCode(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", app.ExitCode(err), err, tt.code)
			}
			if tt.want != "" && out.String() != tt.want {
				t.Fatalf("output\n%s\nwant\n%s", out.String(), tt.want)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
}

func TestAuditVerifyJSONNamesTheHead(t *testing.T) {
	a, out, _, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	last := lastRecord(t, path)
	tests := []struct {
		name string
		args []string
		code int
		want verifyJSON
	}{
		{"no kept head", nil, app.ExitOK,
			verifyJSON{OK: true, Records: 4, Verdict: "ok: 4 records, chain intact", HeadSeq: 4, HeadHash: last.Hash}},
		{"a kept head that holds", []string{"--expect-head", fmt.Sprintf("3:%s", recordAt(t, path, 3).Hash)}, app.ExitOK,
			verifyJSON{OK: true, Records: 4, Verdict: "ok: 4 records, chain intact", HeadSeq: 4, HeadHash: last.Hash,
				ExpectedHead: &expectHeadJSON{Seq: 3, Hash: recordAt(t, path, 3).Hash, Held: true, Following: 1}}},
		{"a kept head past the end", []string{"--expect-head", "5:" + last.Hash}, app.ExitFailure,
			verifyJSON{Records: 4, Verdict: "the log ends at seq 4, before the expected head seq 5: records were removed from its end",
				HeadSeq: 4, HeadHash: last.Hash, ExpectedHead: &expectHeadJSON{Seq: 5, Hash: last.Hash,
					Problem: "the log ends at seq 4, before the expected head seq 5: records were removed from its end"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out.Reset()
			err := runAudit(context.Background(), a, append([]string{"verify", "--json"}, tt.args...)...)
			if app.ExitCode(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", app.ExitCode(err), err, tt.code)
			}
			var got verifyJSON
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("JSON %+v\nwant %+v", got, tt.want)
			}
		})
	}
	var keys map[string]any
	out.Reset()
	if err := runAudit(context.Background(), a, "verify", "--json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil || keys["head_seq"] != 4.0 || keys["head_hash"] != last.Hash {
		t.Fatalf("JSON %q: head_seq and head_hash missing (%v)", out.String(), err)
	}
}

// recordAt is the record at seq of the file store at path.
func recordAt(t *testing.T, path string, seq int64) audit.Record {
	t.Helper()
	st, _ := audit.OpenFile(path)
	var found audit.Record
	if err := st.Scan(context.Background(), func(r audit.Record) error {
		if r.Seq == seq {
			found = r
		}
		return nil
	}); err != nil || found.Seq != seq {
		t.Fatalf("no record at seq %d: %v", seq, err)
	}
	return found
}

func TestAuditVerifyChecksSignedCheckpoints(t *testing.T) {
	a, out, _, path := auditApp(t)
	dir := filepath.Dir(path)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	key := newSigningKey(t)
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := audit.AppendCheckpoint(context.Background(), st, key, audit.Op{ID: "op-1", Operator: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	writeOperation(t, path, "op-2", "orders.dlq", true)
	head := "head seq 9 sha256:" + lastRecord(t, path).Hash
	signers := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	team := signers("team", "# on-call\nana@example.com "+key.AuthorizedKey()+"\n")
	other := signers("other", "bob@example.com "+newSigningKey(t).AuthorizedKey()+"\n")
	tests := []struct {
		name    string
		args    []string
		code    int
		want    string
		wantErr string
	}{
		{name: "the team's key", args: []string{"--allowed-signers", team}, code: app.ExitOK,
			want: "ok: 9 records, chain intact\n4 records after the last signed checkpoint at seq 5 are not signed; that checkpoint is signed by ana@example.com\n" + head + "\n"},
		{name: "with the kept head too", args: []string{"--allowed-signers", team, "--expect-head", fmt.Sprintf("5:%s", cp.Hash)}, code: app.ExitOK,
			want: "ok: 9 records, chain intact\nthe expected head seq 5 is there, and 4 records follow it\n" +
				"4 records after the last signed checkpoint at seq 5 are not signed; that checkpoint is signed by ana@example.com\n" + head + "\n"},
		{name: "a key not allowed", args: []string{"--allowed-signers", other}, code: app.ExitFailure,
			want:    "broken at seq 5: the checkpoint is signed by " + key.Fingerprint() + ", a key the allowed signers do not list\nno signed checkpoint: 4 records are not signed\nhead seq 4 sha256:" + cp.PrevHash + " (the last record before the break)\n",
			wantErr: "failed verification"},
		{name: "no such file", args: []string{"--allowed-signers", filepath.Join(dir, "none")}, code: app.ExitUsage, wantErr: "--allowed-signers"},
		{name: "not an allowed_signers file", args: []string{"--allowed-signers", signers("bad", "ssh-ed25519 AAAA\n")}, code: app.ExitUsage,
			wantErr: "want `principal key-type base64-key`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out.Reset()
			err := runAudit(context.Background(), a, append([]string{"verify"}, tt.args...)...)
			if app.ExitCode(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", app.ExitCode(err), err, tt.code)
			}
			if tt.want != "" && out.String() != tt.want {
				t.Fatalf("output\n%s\nwant\n%s", out.String(), tt.want)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
	out.Reset()
	if err := runAudit(context.Background(), a, "verify", "--json", "--allowed-signers", team); err != nil {
		t.Fatal(err)
	}
	var got verifyJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if c := got.Checkpoints; c == nil || *c != (checkpointJSON{Signed: 1, LastSeq: 5, SignedBy: "ana@example.com", UnsignedAfter: 4}) {
		t.Fatalf("checkpoints in JSON: %+v", c)
	}
}

func newSigningKey(t *testing.T) *audit.SigningKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := audit.NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestAuditExportWritesTheChosenFormatAndWindow(t *testing.T) {
	a, out, errOut, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	tests := []struct {
		name  string
		args  []string
		lines int
		first string
	}{
		{"jsonl by default", nil, 4, `{"seq":1,`},
		{"csv with a header", []string{"--format", "csv"}, 5, "seq,time,operator,"},
		{"since a duration ago", []string{"--since", "1h"}, 4, `{"seq":1,`},
		{"until a date long past", []string{"--until", "2001-01-01"}, 0, ""},
		{"since a future RFC 3339 time", []string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out.Reset()
			errOut.Reset()
			if err := runAudit(context.Background(), a, append([]string{"export"}, tt.args...)...); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if out.Len() == 0 {
				lines = nil
			}
			if len(lines) != tt.lines || (tt.lines > 0 && !strings.HasPrefix(lines[0], tt.first)) {
				t.Fatalf("got %d lines starting %q, want %d starting %q", len(lines), lines, tt.lines, tt.first)
			}
			if !strings.Contains(errOut.String(), "exported") {
				t.Fatalf("stderr %q should count the records", errOut.String())
			}
		})
	}
}

func TestAuditExportOfOneOperationWritesOnlyItsRecordsAndTheyVerify(t *testing.T) {
	a, out, errOut, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	writeOperation(t, path, "op-2", "pay.dlq", false)
	writeOperation(t, path, "op-3", "orders.dlq", true)
	for _, format := range []string{audit.FormatJSONL, audit.FormatCSV} {
		t.Run(format, func(t *testing.T) {
			out.Reset()
			errOut.Reset()
			if err := runAudit(context.Background(), a, "export", "--operation", "op-2", "--format", format); err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			if err := audit.ReadExport(strings.NewReader(out.String()), format, func(r audit.Record) error {
				if r.Operation != "op-2" {
					t.Errorf("seq %d of operation %q was exported", r.Seq, r.Operation)
				}
				seqs = append(seqs, r.Seq)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(seqs) != "[5 6 7]" {
				t.Fatalf("exported seqs %v, want op-2's [5 6 7]", seqs)
			}
			res, err := audit.VerifyExport(strings.NewReader(out.String()), format)
			if err != nil || !res.OK || res.Records != 3 {
				t.Fatalf("the export does not verify: %+v, %v", res, err)
			}
			if !strings.Contains(errOut.String(), "exported 3 records") {
				t.Errorf("stderr %q should count the records", errOut.String())
			}
		})
	}
}

func TestAuditExportOfAnUnknownOperationIsBadUsageAndWritesNothing(t *testing.T) {
	a, out, _, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an ID the log does not hold", []string{"--operation", "op-9", "--format", "csv"}, "no operation op-9 in the audit log (file "},
		{"an ID outside the window", []string{"--operation", "op-1", "--until", "2001-01-01"}, "no operation op-1 in the audit log (file " + path + ") between the times given"},
		{"an empty ID", []string{"--operation", " "}, "--operation is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out.Reset()
			err := runAudit(context.Background(), a, append([]string{"export"}, tt.args...)...)
			if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d (%v), want %d saying %q", app.ExitCode(err), err, app.ExitUsage, tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("wrote %q for an operation it does not have", out.String())
			}
		})
	}
}

func TestAuditCommandsRejectBadUsage(t *testing.T) {
	a, _, _, _ := auditApp(t)
	for _, args := range [][]string{
		{"export", "--format", "xml"},
		{"export", "--since", "yesterday"},
		{"export", "--until", "-5h"},
		{"tail", "-n", "0"},
	} {
		if err := runAudit(context.Background(), a, args...); app.ExitCode(err) != app.ExitUsage {
			t.Errorf("%v: exit %d (%v), want %d", args, app.ExitCode(err), err, app.ExitUsage)
		}
	}
}

func TestAuditTailShowsOneLinePerOperation(t *testing.T) {
	a, out, _, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	writeOperation(t, path, "op-2", "evil\x1b[2J.dlq", false)
	writeOperation(t, path, "op-3", "pay.dlq", true)
	if err := runAudit(context.Background(), a, "tail", "-n", "2"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("tail -n 2 printed %q", lines)
	}
	for i, want := range []string{"INCOMPLETE  replay      op-2  ana  / evil\\x1b[2J.dlq -> orders  selected 3  confirmed 2  returned 1",
		"done        replay      op-3  ana  / pay.dlq -> orders  selected 3  confirmed 2  returned 1"} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %q, want it to end %q", i+1, lines[i], want)
		}
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Fatal("an escape sequence from a queue name reached the output")
	}
}

func TestAuditTailFollowPrintsNewAndFinishedOperations(t *testing.T) {
	a, _, _, path := auditApp(t)
	out := &syncBuffer{}
	a.Out = out
	writeOperation(t, path, "op-1", "orders.dlq", true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runAudit(ctx, a, "tail", "--follow", "--interval", "20ms") }()
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("tail --follow never printed %q; output:\n%s", what, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("op-1")
	writeOperation(t, path, "op-2", "pay.dlq", false)
	waitFor("INCOMPLETE  replay      op-2")
	st, _ := audit.OpenFile(path)
	op := audit.Op{ID: "op-2", Action: "replay", Operator: "ana", Vhost: "/", Queue: "pay.dlq", Target: "orders"}
	if _, err := st.Append(context.Background(), op.Final(nil)); err != nil {
		t.Fatal(err)
	}
	waitFor("done        replay      op-2")
	// A writer dies mid-line: following goes on, and shows what the next
	// writer appends once it has set the fragment aside.
	tearLikeACrash(t, path)
	time.Sleep(100 * time.Millisecond)
	writeOperation(t, path, "op-3", "pay.dlq", true)
	waitFor("op-3")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail --follow ended with %v", err)
	}
	if n := strings.Count(out.String(), "op-1"); n != 1 {
		t.Fatalf("op-1 printed %d times, want once:\n%s", n, out.String())
	}
}

func TestParseWhenAcceptsTimesDatesAndDurations(t *testing.T) {
	now := time.Date(2024, 5, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2024-05-01T03:00:00+02:00", time.Date(2024, 5, 1, 1, 0, 0, 0, time.UTC)},
		{"2024-05-01", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)},
		{"24h", time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)},
		{"90m", time.Date(2024, 5, 2, 10, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := parseWhen(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// syncBuffer lets the test read what a running tail --follow writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A log whose chain broke is said so by tail and export too, not only
// by verify: their lines from the break on cannot be trusted, and they
// exit 1; an empty log verifies, and verify names it, so a mistyped
// path shows.
func TestAuditTailAndExportSayTheChainBroke(t *testing.T) {
	a, out, errOut, path := auditApp(t)
	if err := runAudit(context.Background(), a, "verify"); err != nil || !strings.Contains(errOut.String(), "holds no record: check that it is the log you meant") {
		t.Fatalf("verify of an empty log: %v, stderr %q", err, errOut.String())
	}
	writeOperation(t, path, "op-1", "orders.dlq", true)
	writeOperation(t, path, "op-2", "payments.dlq", true)
	for _, args := range [][]string{{"tail"}, {"export"}} {
		out.Reset()
		errOut.Reset()
		if err := runAudit(context.Background(), a, args...); err != nil || strings.Contains(errOut.String(), "broken") {
			t.Fatalf("%v of an intact log: %v, stderr %q", args, err, errOut.String())
		}
	}
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(raw, []byte(`"operator":"ana"`), []byte(`"operator":"mallory"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tail"}, {"export"}} {
		out.Reset()
		errOut.Reset()
		err := runAudit(context.Background(), a, args...)
		if app.ExitCode(err) != app.ExitFailure || !strings.Contains(errOut.String(), "warning: the audit chain") ||
			!strings.Contains(errOut.String(), "seq 1") || !strings.Contains(errOut.String(), "cannot be trusted") {
			t.Errorf("%v of a log altered at seq 1: exit %d (%v), stderr %q", args, app.ExitCode(err), err, errOut.String())
		}
		if !strings.Contains(out.String(), "payments.dlq") {
			t.Errorf("%v stopped at the break: %q", args, out.String())
		}
	}
}

// An import's line says its messages came from a file exported from
// the queue it names, not from that queue in the vhost it went to.
func TestAuditTailSaysAnImportCameFromAFile(t *testing.T) {
	sum := domain.OperationSummary{Operation: "op-9", Action: "import", Vhost: "staging", Queue: "orders.dlq", Target: "queue:orders",
		Operator: "ana", Started: time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC), Selected: 3, Counts: map[string]int{}}
	if got, want := summaryLine(sum), "staging (a file of orders.dlq) -> queue:orders  selected 3"; !strings.HasSuffix(got, want) {
		t.Errorf("line %q, want it to end %q", got, want)
	}
}
