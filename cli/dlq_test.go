//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/text/format"
)

// hostileID is a logical ID that would recolour a terminal.
const hostileID = "E-\x1b[31mred"

// dlqScene is a vhost of its own where the broker rejected four events
// from orders into orders.dlq, an inbox table where E-1 is applied, and
// a config naming both.
type dlqScene struct {
	vhost  string
	ch     *amqp.Channel
	config string
}

func newDlqScene(t *testing.T, inboxDSN string) *dlqScene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-cli-dlq")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	s := &dlqScene{vhost: vhost, ch: ch}
	s.declare(t, "orders.dlq", nil)
	s.declare(t, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	var msgs []amqp.Publishing
	for _, id := range []string{"E-1", "E-2", "E-3", hostileID} {
		msgs = append(msgs, amqp.Publishing{MessageId: "m-" + id, Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`)})
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)

	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	table := "warren_cli_inbox_" + hex.EncodeToString(rnd[:])
	db, err := pgx.Connect(context.Background(), "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432 unreachable: %v", err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
		db.Close(context.Background())
	})
	if _, err := db.Exec(context.Background(), "CREATE TABLE "+table+" (event_id text primary key, processed_at timestamptz not null)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(context.Background(), "INSERT INTO "+table+" VALUES ('E-1', now())"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s.config = filepath.Join(dir, "warren.toml")
	testEnv("WARREN_DLQ_TEST_PASSWORD", "guest")
	testEnv("WARREN_DLQ_TEST_INBOX", inboxDSN)
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = "`+testAMQP+`"
management_url = "`+testMgmt+`"
username = "guest"
password_env = "WARREN_DLQ_TEST_PASSWORD"
vhost = %q
audit = "file:%s"

[[contexts.t.queues]]
name = "orders"
logical_id = "header:event_id"
dlq = "orders.dlq"
inbox = { dsn_env = "WARREN_DLQ_TEST_INBOX", table = %q, id_column = "event_id", time_column = "processed_at" }
`, vhost, filepath.Join(dir, "audit.jsonl"), table)
	if err := os.WriteFile(s.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *dlqScene) declare(t *testing.T, name string, args amqp.Table) {
	t.Helper()
	if _, err := s.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
}

// runDlq runs `warren dlq ARGS` and returns stdout, stderr and the error.
func runDlq(t *testing.T, configPath string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &App{ConfigPath: configPath, In: strings.NewReader(""), Out: &out, Err: &errOut}
	cmd := newDlqCmd(a)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	// A guard against a command that hangs, not a timing: tests run in
	// parallel on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func lsIDs(t *testing.T, s *dlqScene) []string {
	t.Helper()
	out, _, err := runDlq(t, s.config, "ls", "orders.dlq", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got lsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got.Messages {
		ids = append(ids, m.LogicalID)
	}
	return ids
}

func TestDlqLsJSONCarriesTheContractFieldsAndChangesNothing(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	out, _, err := runDlq(t, s.config, "ls", "orders.dlq", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Messages  []map[string]any          `json:"messages"`
		Histogram map[string]map[string]any `json:"histogram"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	wantKeys := []string{"attempts", "convention", "dead_lettered_at", "error_message", "error_type", "group", "inbox", "logical_id",
		"message_id", "origin_exchange", "origin_queue", "origin_routing_key", "quarantined", "reason", "routing_keys", "size"}
	wantInbox := map[string]string{"E-1": "applied", "E-2": "pending", "E-3": "pending", hostileID: "pending"}
	if len(raw.Messages) != 4 {
		t.Fatalf("%d messages in %s", len(raw.Messages), out)
	}
	for _, m := range raw.Messages {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("message keys %v, want %v", keys, wantKeys)
		}
		id := m["logical_id"].(string)
		if m["convention"] != "broker" || m["group"] == "" || m["error_type"] != "" || m["origin_routing_key"] != "orders" {
			t.Errorf("%s: convention %v, group %v, error type %v, routing key %v", id, m["convention"], m["group"], m["error_type"], m["origin_routing_key"])
		}
		if m["inbox"] != wantInbox[id] || m["reason"] != "rejected" || m["origin_queue"] != "orders" ||
			m["attempts"] != 1.0 || m["message_id"] != "m-"+id || m["dead_lettered_at"] == nil || m["quarantined"] != false {
			t.Errorf("message %q: %v", id, m)
		}
		if rk, _ := m["routing_keys"].([]any); len(rk) != 1 || rk[0] != "orders" {
			t.Errorf("routing keys %v", m["routing_keys"])
		}
	}
	h := raw.Histogram
	if h["attempts"]["1"] != 4.0 || h["reasons"]["rejected"] != 4.0 || h["origins"]["orders"] != 4.0 {
		t.Errorf("histogram %v", h)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
	if again := lsIDs(t, s); !slices.Equal(again, []string{"E-1", "E-2", "E-3", hostileID}) {
		t.Errorf("after ls the DLQ holds %q", again)
	}
}

// A listing cut by --limit says so in --json, as dlq stats says what
// it read (total, expected, complete): a script does not take the first
// N messages for the whole DLQ. A filter's listing is complete once the
// queue is read, whatever the filter left out.
func TestDlqLsJSONSaysWhetherTheListIsComplete(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	for _, tt := range []struct {
		args            []string
		messages, total int
		complete        bool
	}{
		{args: nil, messages: 4, total: 4, complete: true},
		{args: []string{"--limit", "2"}, messages: 2, total: 2, complete: false},
		{args: []string{"--limit", "4"}, messages: 4, total: 4, complete: true},
		{args: []string{"--filter", `applied == false`, "--limit", "1"}, messages: 1, total: 4, complete: false},
		{args: []string{"--filter", `logical_id == "E-2"`, "--limit", "1"}, messages: 1, total: 4, complete: true},
	} {
		testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
		out, errOut, err := runDlq(t, s.config, append([]string{"ls", "orders.dlq", "--json"}, tt.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, errOut)
		}
		var got struct {
			Messages []lsMessage `json:"messages"`
			Total    *int        `json:"total"`
			Expected *int        `json:"expected"`
			Complete *bool       `json:"complete"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v in %s", tt.args, err, out)
		}
		if got.Total == nil || got.Expected == nil || got.Complete == nil {
			t.Fatalf("%v: %s lacks total, expected or complete", tt.args, out)
		}
		if len(got.Messages) != tt.messages || *got.Total != tt.total || *got.Expected != 4 || *got.Complete != tt.complete {
			t.Errorf("%v: %d messages, total %d, expected %d, complete %v; want %d, %d, 4, %v",
				tt.args, len(got.Messages), *got.Total, *got.Expected, *got.Complete, tt.messages, tt.total, tt.complete)
		}
		if cut := strings.Contains(errOut, "reached"); cut == tt.complete {
			t.Errorf("%v: notes %q, want a note of the limit only when the listing is cut", tt.args, errOut)
		}
	}
}

func TestDlqLsTextIsSanitised(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	out, _, err := runDlq(t, s.config, "ls", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `E-\x1b[31mred`) {
		t.Errorf("text output not sanitised:\n%s", out)
	}
	for _, want := range []string{"LOGICAL ID", "E-1", "applied", "pending", "rejected", "attempts  1: 4", "origins   orders 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestDlqLsFiltersAndRejectsBadUsage(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	out, _, err := runDlq(t, s.config, "ls", "orders.dlq", "--json", "--filter", `applied == false && logical_id != "E-3"`, "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	var got lsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].LogicalID != "E-2" {
		t.Errorf("filtered listing %+v, want E-2 alone", got.Messages)
	}
	for _, args := range [][]string{
		{"ls", "orders.dlq", "--filter", "atempts > 1"},
		{"ls", "orders.dlq", "--limit", "0"},
		{"ls"},
		{"show", "orders.dlq"},
	} {
		if _, _, err := runDlq(t, s.config, args...); app.ExitCode(err) != app.ExitUsage {
			t.Errorf("%v: exit %d (%v), want %d", args, app.ExitCode(err), err, app.ExitUsage)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
}

func TestDlqLsWithTheInboxDownSaysUnknownAndWhy(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres:s3cret-pw@127.0.0.1:1/test")
	out, errOut, err := runDlq(t, s.config, "ls", "orders.dlq", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got lsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, m := range got.Messages {
		if m.Inbox != "unknown" {
			t.Errorf("%s: inbox %s, want unknown", m.LogicalID, m.Inbox)
		}
	}
	if len(got.Messages) != 4 || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, "s3cret-pw") {
		t.Errorf("%d messages; notes %q", len(got.Messages), errOut)
	}
}

func TestDlqShowPrintsEveryMessageWithTheID(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	out, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", "E-1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []showJSON `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("%d messages", len(got.Messages))
	}
	m := got.Messages[0]
	if m.Body != `{"id":"E-1"}` || m.BodyEncoding != "utf-8" || m.Headers["event_id"] != "E-1" || m.Inbox != "applied" ||
		m.InboxAppliedAt == nil || len(m.Deaths) != 1 || m.Deaths[0].Queue != "orders" || m.LogicalIDSource != "header" {
		t.Errorf("shown %+v", m)
	}
	text, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", hostileID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "\x1b") || !strings.Contains(text, "body (") || !strings.Contains(text, "death") {
		t.Errorf("show text:\n%s", text)
	}
	if _, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", "nope"); err == nil || app.ExitCode(err) != app.ExitFailure {
		t.Errorf("unknown ID: %v", err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
}

func TestDlqStatsScansTheWholeQueue(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	out, _, err := runDlq(t, s.config, "stats", "orders.dlq", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got statsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Total != 4 || !got.Complete || got.Histogram.Reasons["rejected"] != 4 || got.Histogram.Attempts["1"] != 4 || got.Oldest == nil {
		t.Errorf("stats %+v", got)
	}
	text, _, err := runDlq(t, s.config, "stats", "orders.dlq")
	if err != nil || !strings.Contains(text, "4 messages") {
		t.Errorf("stats text %q, %v", text, err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
}

// A browse (warren's DLQ screen) holds what it shows unacknowledged,
// with no consumer left: a second reader finds nothing ready, and must
// not call the queue empty, nor an empty file its copy.
func TestWhatAnotherBrowseHoldsIsNamedByStatsAndExport(t *testing.T) {
	t.Parallel()
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	browse := testkit.Channel(t, testkit.Dial(t, s.vhost))
	if err := browse.Cancel(testkit.Hold(t, browse, "orders.dlq", 4), false); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUnacked(t, s.vhost, "orders.dlq", 4)

	text, errOut, err := runDlq(t, s.config, "stats", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if want := "4 held by another client, not counted"; !strings.Contains(text, want) {
		t.Errorf("stats %q, want %q", text, want)
	}
	if want := "4 messages are held unacknowledged by another client"; !strings.Contains(errOut, want) {
		t.Errorf("stats notes %q, want %q", errOut, want)
	}
	out, _, err := runDlq(t, s.config, "stats", "orders.dlq", "--json")
	var got statsJSON
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Total != 0 || got.Held != 4 {
		t.Errorf("stats --json %s (%v), want none read and 4 held", out, err)
	}
	file := filepath.Join(t.TempDir(), "orders.jsonl")
	_, errOut, err = runDlq(t, s.config, "export", "orders.dlq", "--output", file)
	if app.ExitCode(err) != app.ExitFailure || !strings.Contains(errOut, "4 messages are held unacknowledged by another client") {
		t.Errorf("export: exit %d (%v), stderr %q; want exit 1 naming the 4 held", app.ExitCode(err), err, errOut)
	}

	// Given back, they are ready: the management API's count, still
	// the old one for a few seconds, must not be taken for held ones.
	if err := browse.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
	out, _, err = runDlq(t, s.config, "stats", "orders.dlq", "--json")
	got = statsJSON{}
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Total != 4 || got.Held != 0 {
		t.Errorf("stats --json %s (%v), want the 4 read and none held", out, err)
	}
}

func TestDlqReadingAQuorumDLQNearItsLimitIsRefused(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	s.declare(t, "limited.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(1)})
	if err := s.ch.Publish("", "limited.dlq", false, false, amqp.Publishing{MessageId: "q-1"}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "limited.dlq", 1)
	// From 4.3 a browse returns with basic.nack, which does not count
	// toward the limit: reading is safe there, and the message stays.
	free := testkit.AtLeast(t, 4, 3)
	for _, cmd := range []string{"ls", "stats"} {
		_, _, err := runDlq(t, s.config, cmd, "limited.dlq")
		switch {
		case free && err != nil:
			t.Errorf("%s on RabbitMQ %s: %v; want the message read, as returns are free there", cmd, testkit.Version(t), err)
		case !free && (app.ExitCode(err) != app.ExitRefused || !strings.Contains(fmt.Sprint(err), "delivery limit 1")):
			t.Errorf("%s: exit %d, %v; want a refusal (exit 3) naming the limit", cmd, app.ExitCode(err), err)
		}
	}
	testkit.WaitDepth(t, s.ch, "limited.dlq", 1)
}

func TestDlqCommandHasEverySubcommand(t *testing.T) {
	var names []string
	for _, c := range newDlqCmd(&App{}).Commands() {
		names = append(names, c.Name())
	}
	sort.Strings(names)
	if want := []string{"edit", "export", "groups", "import", "ls", "quarantine", "replay", "resume", "show", "stats"}; !slices.Equal(names, want) {
		t.Errorf("dlq subcommands %v, want %v", names, want)
	}
}

func TestDlqLsSaysWhenAnotherConsumerHoldsTheMessages(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	if err := s.ch.Qos(10, 0, false); err != nil {
		t.Fatal(err)
	}
	testkit.Hold(t, s.ch, "orders.dlq", 4)
	out, stderr, err := runDlq(t, s.config, "ls", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no messages listed from orders.dlq", "4 messages are held unacknowledged by another client"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}

// Quarantined messages keep their logical ID: the parking queue is read
// with the config entry of the DLQ it belongs to.
func TestDlqParkingQueueKeepsTheLogicalIDs(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	before := lsIDs(t, s)
	if _, stderr, err := runDlq(t, s.config, "quarantine", "orders.dlq", "--yes", "--reason", "poison"); err != nil {
		t.Fatalf("quarantine: %v\n%s", err, stderr)
	}
	out, _, err := runDlq(t, s.config, "ls", "orders.dlq.quarantine", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got lsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var after []string
	for _, m := range got.Messages {
		after = append(after, m.LogicalID)
		if !m.Quarantined {
			t.Errorf("%s in the parking queue is not marked quarantined", m.LogicalID)
		}
	}
	slices.Sort(before)
	slices.Sort(after)
	if len(before) != 4 || !slices.Equal(before, after) {
		t.Fatalf("logical IDs in orders.dlq %v, in its parking queue %v; want the same", before, after)
	}
}

func TestDlqLsWordsALetterAsTheDLQScreenDoes(t *testing.T) {
	at := time.Now().Add(-65 * time.Minute)
	rows := []listed{
		{DeadLetter: domain.DeadLetter{Position: 1, LogicalID: "sha256:0123456789abcdef", LogicalIDFrom: domain.IDHash,
			Reason: "rejected", OriginQueue: "orders", Attempts: 1, DeadLetteredAt: at, Size: 1536, Headroom: -1}, status: domain.InboxUnknown},
		{DeadLetter: domain.DeadLetter{Position: 2, LogicalID: "ord-1", LogicalIDFrom: domain.IDHeader,
			Reason: "expired", OriginQueue: "orders", Attempts: 2, Size: 10, Headroom: -1}, status: domain.InboxUnknown},
	}
	var out bytes.Buffer
	if err := writeLsText(&out, &ops.Target{Ref: domain.QueueRef{Vhost: "/", Name: "orders.dlq"}}, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#sha256:0123456789abcdef", "1h05m", "1.5 KiB", "10 B", format.HashLegend} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dlq ls lacks %q:\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "ord-1") && !strings.Contains(line, format.Unknown) {
			t.Errorf("a letter without a time has no age: %q", line)
		}
	}
}
