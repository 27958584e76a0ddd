//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// actScene is a vhost of its own whose orders queue rejected n messages
// into orders.dlq, and a config pointing at it.
type actScene struct {
	vhost  string
	ch     *amqp.Channel
	config string
	audit  string
}

func newActScene(t *testing.T, n int, extraConfig string) *actScene {
	t.Helper()
	s := newEmptyActScene(t, extraConfig)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte("b")}
	}
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", msgs)
	return s
}

// newEmptyActScene is the scene's queues and config, with no dead letter
// yet: orders dead-letters into orders.dlq.
func newEmptyActScene(t *testing.T, extraConfig string) *actScene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-cli-actions")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	s := &actScene{vhost: vhost, ch: ch}
	s.declare(t, "orders.dlq", nil)
	s.declare(t, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	dir := t.TempDir()
	s.audit = filepath.Join(dir, "audit.jsonl")
	s.config = filepath.Join(dir, "warren.toml")
	testEnv("WARREN_ACTIONS_TEST_PASSWORD", "guest")
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = "`+testAMQP+`"
management_url = "`+testMgmt+`"
username = "guest"
password_env = "WARREN_ACTIONS_TEST_PASSWORD"
vhost = %q
audit = "file:%s"
%s`, vhost, s.audit, extraConfig)
	if err := os.WriteFile(s.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *actScene) declare(t *testing.T, name string, args amqp.Table) {
	t.Helper()
	if _, err := s.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
}

// testEnv sets an environment variable that every test reading it wants
// at the same value (the brokers' guest password, the test database's
// DSN), for the rest of the run: a parallel test cannot t.Setenv.
func testEnv(name, value string) {
	if err := os.Setenv(name, value); err != nil {
		panic(err)
	}
}

// runAction runs one action command the way main does and returns its
// stdout, stderr and error.
func runAction(t *testing.T, configPath string, newCmd func(*App) *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	// A guard against a command that hangs, not a timing: tests run in
	// parallel on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return runActionCtx(ctx, configPath, newCmd, args...)
}

func runActionCtx(ctx context.Context, configPath string, newCmd func(*App) *cobra.Command, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	a := &App{ConfigPath: configPath, In: strings.NewReader(""), Out: &out, Err: &errOut}
	cmd := newCmd(a)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func TestDlqActionsRefuseBadUsageAndUnsafeRuns(t *testing.T) {
	dir := t.TempDir()
	cfg := func(extra string) string {
		p := filepath.Join(dir, fmt.Sprintf("c%d.toml", len(extra)))
		text := "current_context = \"t\"\n[contexts.t]\naudit = \"file:" + filepath.Join(dir, "audit.jsonl") + "\"\n" + extra
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain, readOnly := cfg(""), cfg("read_only = true\n")
	tests := []struct {
		name   string
		config string
		cmd    func(*App) *cobra.Command
		args   []string
		code   int
	}{
		{"no terminal and no --yes", plain, newDlqReplayCmd, []string{"orders.dlq"}, app.ExitRefused},
		{"a read-only context", readOnly, newDlqReplayCmd, []string{"orders.dlq", "--yes"}, app.ExitRefused},
		{"a read-only context refuses quarantine", readOnly, newDlqQuarantineCmd, []string{"orders.dlq", "--yes", "--reason", "r"}, app.ExitRefused},
		{"quarantine without a reason", plain, newDlqQuarantineCmd, []string{"orders.dlq", "--yes"}, app.ExitUsage},
		{"quarantine of a parking queue", plain, newDlqQuarantineCmd, []string{"orders.dlq.quarantine", "--yes", "--reason", "r"}, app.ExitUsage},
		{"a negative rate", plain, newDlqReplayCmd, []string{"orders.dlq", "--yes", "--rate", "-1"}, app.ExitUsage},
		{"a filter that does not compile", plain, newDlqReplayCmd, []string{"orders.dlq", "--yes", "--filter", "attempts >>> 3"}, app.ExitUsage},
		{"a --to without a queue", plain, newDlqReplayCmd, []string{"orders.dlq", "--yes", "--to", "/"}, app.ExitUsage},
		{"no queue named", plain, newDlqReplayCmd, []string{"--yes"}, app.ExitUsage},
		{"--canary-wait without --canary", plain, newDlqReplayCmd, []string{"orders.dlq", "--dry-run", "--canary-wait", "5s"}, app.ExitUsage},
		{"--halt-at without --canary", plain, newDlqReplayCmd, []string{"orders.dlq", "--dry-run", "--halt-at", "5"}, app.ExitUsage},
		{"a read-only context refuses edit", readOnly, newDlqEditCmd, []string{"orders.dlq", "--id", "E-1", "--yes"}, app.ExitRefused},
		{"edit without --id", plain, newDlqEditCmd, []string{"orders.dlq", "--yes"}, app.ExitUsage},
		{"edit with no terminal and no --yes", plain, newDlqEditCmd, []string{"orders.dlq", "--id", "E-1"}, app.ExitRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runAction(t, tc.config, tc.cmd, tc.args...)
			if app.ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", app.ExitCode(err), err, tc.code)
			}
		})
	}
}

func TestDlqReplayDryRunChangesNoQueueAndNoAuditChain(t *testing.T) {
	s := newActScene(t, 5, "")
	out, _, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	want := "dry run: Replay 5 messages (5 B) from orders.dlq to queue orders (default exchange)?"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("output %q, want it to start with %q", out, want)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
	testkit.WaitDepth(t, s.ch, "orders", 0)
	if _, err := os.Stat(s.audit); !os.IsNotExist(err) {
		t.Fatalf("a dry run touched the audit log: %v", err)
	}
}

func TestDlqReplayWithYesMovesTheMessagesAndPrintsTheJSONContract(t *testing.T) {
	s := newActScene(t, 5, "")
	out, _, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "audit_head,confirmed,halted,nacked,operation,returned,selected,skipped_applied,unknown" {
		t.Fatalf("JSON fields %v", keys)
	}
	if got["confirmed"] != 5.0 || got["selected"] != 5.0 || got["operation"] == "" {
		t.Fatalf("result %v", got)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	testkit.WaitDepth(t, s.ch, "orders", 5)
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := audit.Verify(context.Background(), st); err != nil || !res.OK || res.Records < 3 {
		t.Fatalf("audit chain after the replay: %v %v", res, err)
	}
	// The head after the final record is the log's head: what the
	// operator keeps in the ticket, and verify --expect-head checks.
	last, _, err := st.Last(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	head, _ := got["audit_head"].(map[string]any)
	if head["seq"] != float64(last.Seq) || head["hash"] != last.Hash || last.Outcome != domain.OutcomeFinal {
		t.Fatalf("audit_head %v, want the log's last record, seq %d %s (%s)", got["audit_head"], last.Seq, last.Hash, last.Outcome)
	}
}

// A replay no one was asked about says why what it read and did not
// move stayed, as the question would have: messages published straight
// into the DLQ have no x-death to name their origin.
func TestDlqReplayWithYesSaysWhyMessagesStayed(t *testing.T) {
	s := newActScene(t, 2, "")
	for i := range 3 {
		if err := s.ch.Publish("", "orders.dlq", false, false, amqp.Publishing{MessageId: fmt.Sprintf("plain-%d", i), Body: []byte("p")}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "5 read, 2 moved, 3 of them still in orders.dlq") {
		t.Errorf("outcome %q, want 5 read, 2 moved, 3 of them still in orders.dlq", out)
	}
	if !strings.Contains(errOut, "note: 3 without an origin queue stay (use --to)") {
		t.Errorf("stderr %q does not say why 3 stayed", errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders", 2)
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	_, errOut, err = runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--filter", "attempts >= 3")
	if err != nil {
		t.Fatalf("filtered replay: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "note: 3 not matching the filter stay") {
		t.Errorf("stderr %q does not say the filter left 3", errOut)
	}
}

// A replayed message that dies again has failed once more than before
// its replay, on both brokers: 3.10 goes on counting on the x-death the
// copy carries, 4.3 starts x-death afresh, and the copy's record of its
// attempts bridges the two. dlq ls (each letter) and dlq stats (the scan)
// say the same.
func TestAReplayedMessageThatDiesAgainCountsOneMoreAttempt(t *testing.T) {
	s := newActScene(t, 1, "")
	attempts := func(want int) {
		t.Helper()
		out, errOut, err := runAction(t, s.config, newDlqLsCmd, "orders.dlq", "--json")
		if err != nil {
			t.Fatalf("dlq ls: %v\n%s", err, errOut)
		}
		var ls struct {
			Messages []struct {
				Attempts int `json:"attempts"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Messages) != 1 {
			t.Fatalf("dlq ls --json %q: %v", out, err)
		}
		if ls.Messages[0].Attempts != want {
			t.Errorf("dlq ls: attempts %d, want %d", ls.Messages[0].Attempts, want)
		}
		out, errOut, err = runAction(t, s.config, newDlqStatsCmd, "orders.dlq", "--json")
		if err != nil {
			t.Fatalf("dlq stats: %v\n%s", err, errOut)
		}
		var st struct {
			Histogram struct {
				Attempts map[string]int `json:"attempts"`
			} `json:"histogram"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("dlq stats --json %q: %v", out, err)
		}
		if got := st.Histogram.Attempts; len(got) != 1 || got[fmt.Sprint(want)] != 1 {
			t.Errorf("dlq stats: attempts %v, want the one message at %d", got, want)
		}
	}
	attempts(1)
	for want := 2; want <= 3; want++ {
		if _, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes"); err != nil {
			t.Fatalf("replay: %v\n%s", err, errOut)
		}
		testkit.WaitDepth(t, s.ch, "orders", 1)
		d, ok, err := s.ch.Get("orders", false)
		if err != nil || !ok {
			t.Fatalf("get the copy: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
		testkit.WaitDepth(t, s.ch, "orders.dlq", 1)
		attempts(want)
	}
}

// With audit_signing_key, a replay ends with a signed checkpoint: its
// head is the checkpoint, and verify with the allowed signers finds
// every record signed. A key others can read refuses the replay before
// anything moves.
func TestDlqReplayWithASigningKeyEndsWithASignedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "audit_ed25519")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	signers := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(signers, append([]byte("ana@example.com "), ssh.MarshalAuthorizedKey(pub)...), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newActScene(t, 3, fmt.Sprintf("audit_signing_key = %q\n", keyPath))
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key others can read: exit %d (%v), want %d naming chmod 600", app.ExitCode(err), err, app.ExitRefused)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	if err := os.Chmod(keyPath, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		AuditHead domain.AuditHead `json:"audit_head"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	last, _, err := st.Last(context.Background())
	if err != nil || !audit.IsCheckpoint(last) || got.AuditHead != audit.HeadOf(last) {
		t.Fatalf("audit_head %v; the log ends with %s/%s seq %d (%v), want the checkpoint's head", got.AuditHead, last.Action, last.Outcome, last.Seq, err)
	}
	vout, _, err := runAction(t, s.config, newAuditCmd, "verify", "--allowed-signers", signers,
		"--expect-head", fmt.Sprintf("%d:%s", got.AuditHead.Seq, got.AuditHead.Hash))
	if err != nil || !strings.Contains(vout, "the last record is the checkpoint at seq "+fmt.Sprint(last.Seq)+", signed by ana@example.com") {
		t.Fatalf("verify: %v\n%s", err, vout)
	}
}

func TestDlqQuarantineMovesToTheConfiguredParkingQueue(t *testing.T) {
	s := newActScene(t, 4, "[[contexts.t.queues]]\nname = \"orders\"\ndlq = \"orders.dlq\"\nquarantine = \"orders.parking\"\n")
	out, _, err := runAction(t, s.config, newDlqQuarantineCmd, "orders.dlq", "--yes", "--reason", "bad payload")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "4 confirmed") {
		t.Fatalf("output %q", out)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	testkit.WaitDepth(t, s.ch, "orders.parking", 4)
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	last, _, err := st.Last(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "\naudit head: seq " + fmt.Sprint(last.Seq) + " sha256:" + last.Hash + "\n"; !strings.HasSuffix(out, want) {
		t.Fatalf("output %q, want it to end with the head %q", out, want)
	}
}

func TestDlqReplayIsRefusedWhenTheOriginQueueIsGone(t *testing.T) {
	s := newActScene(t, 3, "")
	if _, err := s.ch.QueueDelete("orders", false, false, false); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "queue orders (default exchange) does not exist") {
		t.Fatalf("exit %d (%v), stderr %q: want %d naming the missing queue", app.ExitCode(err), err, errOut, app.ExitRefused)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
}

// A destination that exists but routes nowhere returns the first copy:
// publishing stops there, rather than returning every copy, and every
// message stays.
func TestDlqReplayStopsAtTheFirstReturn(t *testing.T) {
	s := newActScene(t, 3, "")
	if err := s.ch.ExchangeDeclare("nowhere", "direct", false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json", "--to", "nowhere/none")
	if app.ExitCode(err) != app.ExitFailure || !strings.Contains(err.Error(), "exchange nowhere (routing key none) did not route") {
		t.Fatalf("exit %d (%v), stderr %q: want 1 naming the destination", app.ExitCode(err), err, errOut)
	}
	var res struct{ Returned, Confirmed int }
	if jerr := json.Unmarshal([]byte(out), &res); jerr != nil || res.Returned < 1 || res.Confirmed != 0 {
		t.Fatalf("output %q (%v), want returns and no confirm", out, jerr)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	// An exchange that does not exist: refused before anything goes,
	// counting what was read so far (the run streams: it cannot know
	// all), and the result says all read are still in the DLQ.
	_, errOut, err = runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--to", "absent/none")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "of the messages read so far would go there)") {
		t.Errorf("replay to a missing exchange: exit %d (%v), want refused counting what was read so far", app.ExitCode(err), err)
	}
	if strings.Contains(errOut, "kept in") {
		t.Errorf("the result of the refused replay:\n%s\nwant the 3 read still in orders.dlq", errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
}

func TestDlqReplayIsRefusedWhenTheAuditStoreIsUnwritable(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newActScene(t, 3, "")
	text, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(text), s.audit, filepath.Join(blocker, "audit.jsonl"), 1)
	if err := os.WriteFile(s.config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes")
	if app.ExitCode(err) != app.ExitRefused {
		t.Fatalf("exit %d (%v), want %d", app.ExitCode(err), err, app.ExitRefused)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	testkit.WaitDepth(t, s.ch, "orders", 0)
}

func TestDlqReplaySkipsWhatTheInboxAppliedUnlessIncluded(t *testing.T) {
	tests := []struct {
		name                            string
		args                            []string
		selected, skipped, leftInTheDLQ int
	}{
		{"applied skipped and counted", nil, 3, 1, 1},
		{"include-applied replays them too", []string{"--include-applied"}, 4, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
			out, _, err := runAction(t, s.config, newDlqReplayCmd, append([]string{"orders.dlq", "--yes", "--json"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Selected       int `json:"selected"`
				SkippedApplied int `json:"skipped_applied"`
				Confirmed      int `json:"confirmed"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if res.Selected != tc.selected || res.Confirmed != tc.selected || res.SkippedApplied != tc.skipped {
				t.Fatalf("result %+v, want %d selected and confirmed, %d skipped", res, tc.selected, tc.skipped)
			}
			testkit.WaitDepth(t, s.ch, "orders.dlq", tc.leftInTheDLQ)
			testkit.WaitDepth(t, s.ch, "orders", tc.selected)
		})
	}
}

// A plan whose exchange destination routes its key to no queue says so
// before anyone confirms: its first copy would come back unroutable and
// stop the run. A key the exchange routes draws no such warning.
func TestAPlanWarnsOfAnExchangeThatRoutesItsKeyNowhere(t *testing.T) {
	s := newActScene(t, 2, "")
	testkit.Declare(t, s.ch, "target", nil)
	if err := s.ch.QueueBind("target", "orders.k", "amq.topic", false, nil); err != nil {
		t.Fatal(err)
	}
	const warn = "exchange amq.topic (routing key nowhere) routes to no queue, as the management API lists its bindings"
	_, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--to", "amq.topic/nowhere", "--dry-run")
	if err != nil || !strings.Contains(errOut, warn) || !strings.Contains(errOut, "would come back unroutable and stop the run, nothing lost") {
		t.Fatalf("replay --to amq.topic/nowhere --dry-run: %v\n%s\nwant the unroutable key warned of", err, errOut)
	}
	if _, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--to", "amq.topic/orders.k", "--dry-run"); err != nil || strings.Contains(errOut, "routes to no queue") {
		t.Errorf("replay --to amq.topic/orders.k --dry-run: %v\n%s\nwant no warning: the key is bound", err, errOut)
	}
	file := filepath.Join(t.TempDir(), "orders.jsonl")
	if _, errOut, err := runAction(t, s.config, newDlqExportCmd, "orders.dlq", "--output", file); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if _, errOut, err := runAction(t, s.config, newDlqImportCmd, file, "--exchange", "amq.topic", "--routing-key", "nowhere", "--dry-run"); err != nil || !strings.Contains(errOut, warn) {
		t.Errorf("import --exchange amq.topic --routing-key nowhere --dry-run: %v\n%s\nwant the unroutable key warned of", err, errOut)
	}
}

// A destination whose max-length the copies would pass, with overflow
// drop-head, would push out what waits there — and copies this run
// confirmed: the plan says so before the question.
func TestAPlanWarnsOfADestinationTheCopiesWouldOverflow(t *testing.T) {
	s := newActScene(t, 3, "")
	testkit.Declare(t, s.ch, "small", amqp.Table{"x-max-length": int32(2)})
	for i := range 2 {
		if err := s.ch.Publish("", "small", false, false, amqp.Publishing{MessageId: fmt.Sprintf("w-%d", i), Body: []byte("waiting")}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, s.ch, "small", 2)
	_, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--to", "/small", "--dry-run")
	want := "queue small holds 2 of its max-length 2 (overflow drop-head): the 3 messages going there would push out the 3 messages at its head, dropped: it has no dead-letter exchange — 1 message of them copies this run confirmed"
	if err != nil || !strings.Contains(errOut, want) {
		t.Fatalf("replay --to /small --dry-run: %v\n%s\nwant the overflow warned of", err, errOut)
	}
	// Room enough: no warning.
	testkit.Declare(t, s.ch, "roomy", amqp.Table{"x-max-length": int32(10)})
	if _, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--to", "/roomy", "--dry-run"); err != nil || strings.Contains(errOut, "max-length") {
		t.Errorf("replay --to /roomy --dry-run: %v\n%s\nwant no warning", err, errOut)
	}
}
