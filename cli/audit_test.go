package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenops/warren/audit"
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
		op.Outcome(audit.OutcomeConfirmed, []string{"m1", "m2"}, []string{"e1", "e2"}, nil),
		op.Outcome(audit.OutcomeReturned, []string{"m3"}, []string{"e3"}, nil),
	}
	if finish {
		recs = append(recs, op.Final(map[string]int{audit.OutcomeConfirmed: 2, audit.OutcomeReturned: 1}))
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
	if got := out.String(); got != "ok: 4 records, chain intact\n" {
		t.Fatalf("output %q", got)
	}
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(raw, []byte(`"m3"`), []byte(`"m4"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := runAudit(context.Background(), a, "verify")
	if ExitCode(err) != ExitFailure {
		t.Fatalf("broken chain: exit %d (%v), want %d", ExitCode(err), err, ExitFailure)
	}
	if got := out.String(); !strings.HasPrefix(got, "broken at seq 3: hash mismatch") {
		t.Fatalf("output %q", got)
	}
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
			if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d (%v), want %d saying %q", ExitCode(err), err, ExitUsage, tt.want)
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
		if err := runAudit(context.Background(), a, args...); ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v), want %d", args, ExitCode(err), err, ExitUsage)
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":99,"ti`); err != nil {
		t.Fatal(err)
	}
	f.Close()
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

func TestTerminalWriterSanitisesWholeLines(t *testing.T) {
	var b bytes.Buffer
	tw := &terminalWriter{w: &b}
	esc := "q\x1b[31m ação\n"
	for i := range len(esc) { // byte by byte, splitting the UTF-8 sequences
		if _, err := tw.Write([]byte{esc[i]}); err != nil {
			t.Fatal(err)
		}
	}
	tw.Write([]byte("tail"))
	tw.Flush()
	if got, want := b.String(), "q\\x1b[31m ação\ntail"; got != want {
		t.Fatalf("got %q, want %q", got, want)
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
