package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// These tests run the commands' own logic over a fake management API:
// no broker, no database (make test-unit runs them). What the broker
// decides is tested against the real one in the other files.

// fakeManagement answers every snapshot with snap, and counts the calls.
type fakeManagement struct {
	snap     *domain.Snapshot
	channels *domain.ChannelList
	err      error
	asked    []domain.SnapshotOptions
	vhosts   []string // the vhosts Channels was asked for
}

func (f *fakeManagement) Snapshot(_ context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	f.asked = append(f.asked, o)
	if f.err != nil {
		return nil, f.err
	}
	return f.snap, nil
}

func (f *fakeManagement) Overview(context.Context) (*domain.Overview, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &f.snap.Overview, nil
}

func (f *fakeManagement) Channels(_ context.Context, vhost string) (*domain.ChannelList, error) {
	f.vhosts = append(f.vhosts, vhost)
	if f.err != nil {
		return nil, f.err
	}
	return f.channels, nil
}

// unitConfig writes a config whose broker addresses answer nothing, so a
// command that tried to dial instead of using the fake would fail.
func unitConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "warren.toml")
	text := `current_context = "unit"
[contexts.unit]
amqp_url = "amqp://127.0.0.1:1/"
management_url = "http://127.0.0.1:1"
username = "guest"
password_env = "WARREN_UNIT_PASSWORD"
audit = "file:` + filepath.Join(dir, "audit.jsonl") + `"
` + extra
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WARREN_UNIT_PASSWORD", "unit")
	return path
}

// runUnit runs warren's command line on a fresh App whose management API
// is fake.
func runUnit(t *testing.T, fake *fakeManagement, args ...string) cliRun {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &errOut,
		NewManagement: func(*config.Context) (app.Management, error) { return fake, nil }}
	return execCLIOn(t, a, &out, &errOut, args...)
}

// unitSnapshot is a broker with a growing queue, a draining one, a DLQ
// that holds its messages and a queue nobody consumes.
func unitSnapshot() *domain.Snapshot {
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	head := now.Add(-90 * time.Second)
	dlq := domain.QueueRef{Vhost: "/", Name: "orders.dlq"}
	delayed, dlxHeld := int64(12), int64(0)
	return &domain.Snapshot{
		TakenAt:  now,
		StatsAge: 2 * time.Second,
		Overview: domain.Overview{ClusterName: "rabbit@unit", RabbitMQVersion: "3.10.8"},
		Nodes:    []domain.Node{{Name: "rabbit@unit", Running: true}},
		Queues: []domain.Queue{
			{Vhost: "/", Name: "orders", Type: "classic", Messages: 120, Ready: 100, Unacked: 20, Consumers: 2,
				PublishRate: 5, AckRate: 3, HasRates: true, DLQ: &dlq, DLQMessages: 7, HeadMessageTimestamp: &head},
			{Vhost: "/", Name: "shipping", Type: "quorum", Messages: 600, Ready: 600, Consumers: 1,
				PublishRate: 2, AckRate: 12, HasRates: true, OldestUnknownReason: "quorum queues carry no head timestamp",
				Delayed: &delayed, DLXHeld: &dlxHeld},
			{Vhost: "/", Name: "orders.dlq", Type: "classic", Messages: 7, Ready: 7, HasRates: true,
				DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}},
			{Vhost: "/", Name: "audit.\x1b[31mred", Type: "classic", Messages: 3, Ready: 3, HasRates: true},
		},
	}
}

func TestStatusWordsEachQueueFromTheSnapshot(t *testing.T) {
	fake := &fakeManagement{snap: unitSnapshot()}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "status")
	if r.err != nil {
		t.Fatalf("status: %v\n%s", r.err, r.errOut)
	}
	lines := strings.Split(r.out, "\n")
	if !strings.Contains(lines[0], "RabbitMQ 3.10.8") {
		t.Errorf("header %q does not name the version", lines[0])
	}
	row := func(name string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 1 && f[1] == name {
				return l
			}
		}
		t.Fatalf("no row for %s in\n%s", name, r.out)
		return ""
	}
	for name, words := range map[string][]string{
		"orders":     {"1m30s", "growing +2.0/s", "orders.dlq (7)"},
		"shipping":   {"ETA 1m"},
		"orders.dlq": {"held"},
	} {
		for _, w := range words {
			if l := row(name); !strings.Contains(l, w) {
				t.Errorf("%s row %q lacks %q", name, l, w)
			}
		}
	}
	if strings.Contains(r.out, "\x1b") || !strings.Contains(r.out, "no consumers") {
		t.Errorf("a hostile name must be sanitised and its queue judged:\n%q", r.out)
	}
	if len(fake.asked) != 1 || !fake.asked[0].AllRates {
		t.Errorf("status asked %+v, want one snapshot with every queue's rates", fake.asked)
	}
}

func TestStatusJSONFromTheSnapshot(t *testing.T) {
	r := runUnit(t, &fakeManagement{snap: unitSnapshot()}, "--config", unitConfig(t, ""), "status", "--json")
	if r.err != nil {
		t.Fatalf("status --json: %v\n%s", r.err, r.errOut)
	}
	var got statusJSON
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("decode %s: %v", r.out, err)
	}
	by := map[string]statusQueue{}
	for _, q := range got.Queues {
		by[q.Name] = q
	}
	orders, shipping := by["orders"], by["shipping"]
	switch {
	case orders.OldestAgeSeconds == nil || *orders.OldestAgeSeconds != 90:
		t.Errorf("orders oldest = %v, want 90", orders.OldestAgeSeconds)
	case orders.DrainETASeconds != nil:
		t.Errorf("a growing queue has no drain ETA, got %v", *orders.DrainETASeconds)
	case orders.DLQ == nil || orders.DLQ.Name != "orders.dlq" || orders.DLQ.Messages != 7:
		t.Errorf("orders dlq = %+v", orders.DLQ)
	case shipping.DrainETASeconds == nil || *shipping.DrainETASeconds != 60:
		t.Errorf("shipping drain ETA = %v, want 60 (600 ÷ (12 − 2))", shipping.DrainETASeconds)
	case shipping.OldestAgeSeconds != nil:
		t.Errorf("a quorum queue's oldest age is unknown, got %v", *shipping.OldestAgeSeconds)
	case got.StatsAgeSeconds != 2:
		t.Errorf("stats age = %v, want 2", got.StatsAgeSeconds)
	case shipping.Delayed == nil || *shipping.Delayed != 12 || shipping.DLXHeld == nil || *shipping.DLXHeld != 0:
		t.Errorf("shipping delayed %v, dlx_held %v: want 12 and a reported 0", shipping.Delayed, shipping.DLXHeld)
	case orders.Delayed != nil || orders.DLXHeld != nil:
		t.Errorf("a queue the broker reports no 4.3 figures for has delayed %v, dlx_held %v: want null, unknown", orders.Delayed, orders.DLXHeld)
	}
	if !strings.Contains(r.out, `"delayed": null`) || !strings.Contains(r.out, `"dlx_held": null`) {
		t.Errorf("unknown 4.3 figures are not null in the JSON:\n%s", r.out)
	}
}

func TestStatusNamesTheManagementAPIsFailure(t *testing.T) {
	fake := &fakeManagement{err: errors.New("management API at http://127.0.0.1:1 unreachable: connection refused")}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "status")
	if r.code() != app.ExitFailure || !strings.Contains(r.errOut, "unreachable") {
		t.Fatalf("exit %d, stderr %q: want 1 and the cause", r.code(), r.errOut)
	}
}

func TestDlqActionsRefuseBeforeTouchingTheBroker(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		args  []string
		code  int
		want  string
	}{
		{"a read-only context", "read_only = true\n", []string{"dlq", "replay", "orders.dlq", "--yes"}, app.ExitRefused, "read-only"},
		{"no terminal and no --yes", "", []string{"dlq", "replay", "orders.dlq"}, app.ExitRefused, "--yes"},
		{"a negative limit", "", []string{"dlq", "replay", "orders.dlq", "--yes", "--limit", "-1"}, app.ExitUsage, "--limit -1"},
		{"a negative rate", "", []string{"dlq", "replay", "orders.dlq", "--yes", "--rate", "-1"}, app.ExitUsage, "--rate"},
		{"quarantine without a reason", "", []string{"dlq", "quarantine", "orders.dlq", "--yes"}, app.ExitUsage, "--reason"},
		{"a filter that does not compile", "", []string{"dlq", "replay", "orders.dlq", "--yes", "--filter", "attempts >"}, app.ExitUsage, "attempts"},
		{"a bad destination", "", []string{"dlq", "replay", "orders.dlq", "--yes", "--to", "/"}, app.ExitUsage, "--to"},
		{"quarantine from a parking queue", "[[contexts.unit.queues]]\nname = \"orders\"\nquarantine = \"orders.parking\"\n",
			[]string{"dlq", "quarantine", "orders.parking", "--yes", "--reason", "x"}, app.ExitUsage, "parking queue already"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeManagement{snap: unitSnapshot()}
			r := runUnit(t, fake, append([]string{"--config", unitConfig(t, tc.extra)}, tc.args...)...)
			if r.code() != tc.code || !strings.Contains(r.errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q: want %d naming %q", r.code(), r.errOut, tc.code, tc.want)
			}
			if len(fake.asked) != 0 {
				t.Errorf("the broker was read (%d snapshots) before a refusal the command line decides alone", len(fake.asked))
			}
		})
	}
}

func TestDlqReplayIsRefusedWhenTheAuditFileCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// root writes anywhere: make the audit path a directory instead.
		locked = filepath.Join(dir, "audit-is-a-dir")
		if err := os.Mkdir(locked, 0o700); err != nil {
			t.Fatal(err)
		}
	} else {
		locked = filepath.Join(locked, "audit.jsonl")
	}
	cfg := unitConfig(t, "")
	text, _ := os.ReadFile(cfg)
	fixed := strings.Replace(string(text), `audit = "file:`+filepath.Join(filepath.Dir(cfg), "audit.jsonl")+`"`, `audit = "file:`+locked+`"`, 1)
	if err := os.WriteFile(cfg, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runUnit(t, &fakeManagement{snap: unitSnapshot()}, "--config", cfg, "dlq", "replay", "orders.dlq", "--yes")
	if r.code() != app.ExitRefused || !strings.Contains(r.errOut, "nothing was changed") {
		t.Fatalf("exit %d, stderr %q: want 3 and that nothing was changed", r.code(), r.errOut)
	}
}

func TestDlqCommandsNameAQueueTheBrokerDoesNotHave(t *testing.T) {
	for _, args := range [][]string{
		{"dlq", "ls", "nope.dlq"},
		{"dlq", "stats", "nope.dlq"},
		{"dlq", "replay", "nope.dlq", "--dry-run"},
	} {
		r := runUnit(t, &fakeManagement{snap: unitSnapshot()}, append([]string{"--config", unitConfig(t, "")}, args...)...)
		if r.code() != app.ExitFailure || !strings.Contains(r.errOut, "queue nope.dlq not found in vhost /") {
			t.Errorf("%v: exit %d, stderr %q: want 1 naming the queue and vhost", args, r.code(), r.errOut)
		}
	}
}

func TestConfirmActionNeedsYesOrTheExactPhrase(t *testing.T) {
	tests := []struct {
		name, input, phrase string
		want                bool
	}{
		{"y confirms", "y\n", "", true},
		{"yes confirms", "YES\n", "", true},
		{"anything else declines", "n\n", "", false},
		{"end of input declines", "", "", false},
		{"the exact phrase confirms", "orders.dlq 150\n", "orders.dlq 150", true},
		{"y is not the phrase", "y\n", "orders.dlq 150", false},
		{"a wrong count declines", "orders.dlq 15\n", "orders.dlq 150", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var prompt bytes.Buffer
			got, err := confirmAction(context.Background(), strings.NewReader(tc.input), &prompt, "Replay 150 messages?", tc.phrase)
			if err != nil || got != tc.want {
				t.Fatalf("confirmed %v (%v), want %v", got, err, tc.want)
			}
			if !strings.HasPrefix(prompt.String(), "Replay 150 messages?") {
				t.Fatalf("prompt %q", prompt.String())
			}
		})
	}
}

// The phrase to type is shown as it is to be typed: a queue name's
// escape (sanitised where the phrase was made) is not escaped again, so
// typing what the prompt shows confirms.
func TestTheConfirmPhraseIsShownAsItIsTyped(t *testing.T) {
	phrase := sanitize.Text("evil\x1b[2J.dlq") + " 1"
	var prompt bytes.Buffer
	got, err := confirmAction(context.Background(), strings.NewReader(`evil\x1b[2J.dlq 1`+"\n"), &prompt, "Replay 1 message?", phrase)
	if err != nil || !got {
		t.Fatalf("typing the phrase shown: confirmed %v (%v)", got, err)
	}
	if want := `Type "evil\x1b[2J.dlq 1" to confirm: `; !strings.Contains(prompt.String(), want) || strings.Contains(prompt.String(), "\x1b") {
		t.Errorf("prompt %q, want %q", prompt.String(), want)
	}
}
