//go:build integration

package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

const canaryDSN = "postgres://postgres@127.0.0.1:5432/test"

// canaryScene is a vhost of its own where orders dead-letters through
// the exchange orders.dlx into orders.dlq, and the broker rejected n
// events (header event_id E-i) into it; with an inbox, a table of its
// own that a consumer applies to.
type canaryScene struct {
	vhost, config, audit, table string
	ch                          *amqp.Channel
	db                          *pgx.Conn
}

func newCanaryScene(t *testing.T, n int, withInbox bool) *canaryScene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-canary")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	s := &canaryScene{vhost: vhost, ch: ch}
	if err := ch.ExchangeDeclare("orders.dlx", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "orders.dlq", nil)
	if err := ch.QueueBind("orders.dlq", "orders", "orders.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders"})
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		id := fmt.Sprintf("E-%d", i)
		msgs[i] = amqp.Publishing{MessageId: "m-" + id, Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`)}
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)

	dir := t.TempDir()
	s.audit, s.config = filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "warren.toml")
	testEnv("WARREN_CANARY_TEST_PASSWORD", "guest")
	inbox := ""
	if withInbox {
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		s.table = "warren_canary_inbox_" + hex.EncodeToString(rnd[:])
		db, err := pgx.Connect(context.Background(), canaryDSN)
		if err != nil {
			t.Fatalf("PostgreSQL unreachable: %v", err)
		}
		s.db = db
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+s.table)
			db.Close(context.Background())
		})
		if _, err := db.Exec(context.Background(), "CREATE TABLE "+s.table+" (event_id text primary key, processed_at timestamptz not null)"); err != nil {
			t.Fatal(err)
		}
		testEnv("WARREN_CANARY_TEST_INBOX", canaryDSN)
		inbox = fmt.Sprintf(`inbox = { dsn_env = "WARREN_CANARY_TEST_INBOX", table = %q, id_column = "event_id", time_column = "processed_at" }`, s.table)
	}
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = "`+testAMQP+`"
management_url = "`+testMgmt+`"
username = "guest"
password_env = "WARREN_CANARY_TEST_PASSWORD"
vhost = %q
audit = "file:%s"

[[contexts.t.queues]]
name = "orders"
logical_id = "header:event_id"
dlq = "orders.dlq"
%s
`, vhost, s.audit, inbox)
	if err := os.WriteFile(s.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// consumer takes from orders on a connection of its own until stopped:
// decide says, per delivery (counted from 1), whether to ack it (after
// applying it to the inbox, when the scene has one) or reject it, which
// dead-letters it back into orders.dlq. every spaces the acks: a
// consumer that takes 1/every messages per second.
type consumer struct {
	acked, rejected atomic.Int64
	stop            func()
}

func (s *canaryScene) consume(t *testing.T, every time.Duration, decide func(n int64) bool) *consumer {
	t.Helper()
	conn := testkit.Dial(t, s.vhost)
	ch := testkit.Channel(t, conn)
	if err := ch.Qos(10, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume("orders", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &consumer{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var n int64
		for {
			select {
			case <-done:
				return
			case d, ok := <-deliveries:
				if !ok {
					return
				}
				n++
				if every > 0 {
					time.Sleep(every)
				}
				if !decide(n) {
					_ = d.Nack(false, false)
					c.rejected.Add(1)
					continue
				}
				if s.db != nil {
					id, _ := d.Headers["event_id"].(string)
					if _, err := s.db.Exec(context.Background(), "INSERT INTO "+s.table+" VALUES ($1, now()) ON CONFLICT DO NOTHING", id); err != nil {
						_ = d.Nack(false, true)
						continue
					}
				}
				_ = d.Ack(false)
				c.acked.Add(1)
			}
		}
	}()
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			_ = ch.Close() // what it held goes back to orders
		})
	}
	t.Cleanup(c.stop)
	return c
}

var (
	failEvery = func(int64) bool { return false }
	takeEvery = func(int64) bool { return true }
)

// stagedJSON is the part of `dlq replay --json` (and `dlq resume
// --json`) a staged run adds.
type stagedJSON struct {
	Operation  string                `json:"operation"`
	Confirmed  int                   `json:"confirmed"`
	Canary     *domain.StageVerdict  `json:"canary"`
	Stages     []domain.StageVerdict `json:"stages"`
	Halted     bool                  `json:"halted"`
	HaltReason string                `json:"halt_reason"`
}

func decodeStaged(t *testing.T, out string) stagedJSON {
	t.Helper()
	var r stagedJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return r
}

// auditOutcomes counts the scene's audit records of op by outcome.
func (s *canaryScene) auditOutcomes(t *testing.T, op string) (map[string]int, []audit.Record) {
	t.Helper()
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts := map[string]int{}
	var recs []audit.Record
	err = st.Scan(context.Background(), func(r audit.Record) error {
		if r.Operation == op {
			counts[r.Outcome]++
			recs = append(recs, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, recs
}

func TestCanaryHaltsOnAConsumerThatRejectsThenResumeFinishes(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	const n = 300
	s := newCanaryScene(t, n, false)
	bad := s.consume(t, 0, failEvery)
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "10", "--canary-wait", "10s", "--yes", "--json")
	if app.ExitCode(err) != app.ExitHalted {
		t.Fatalf("replay: exit %d (%v), want %d (halted)\n%s", app.ExitCode(err), err, app.ExitHalted, errOut)
	}
	r := decodeStaged(t, out)
	if !r.Halted || r.Canary == nil || r.Canary.FailedAgain == 0 || r.Canary.Verdict != domain.VerdictHalted || r.Confirmed > 10 {
		t.Fatalf("replay: %+v canary %+v; want halted at the canary, at most its 10 copies published", r, r.Canary)
	}
	if !strings.Contains(r.HaltReason, "after the canary") || !strings.Contains(r.HaltReason, "failed again") || !strings.Contains(r.HaltReason, "rejected in orders") {
		t.Errorf("halt reason %q: want the canary, the count and the failure group", r.HaltReason)
	}
	if !strings.Contains(errOut, "dlq resume orders.dlq") {
		t.Errorf("stderr does not say how to go on:\n%s", errOut)
	}
	// Nothing is lost: the canary's copies died back, the rest stayed.
	testkit.WaitDepth(t, s.ch, "orders.dlq", n)
	if got := bad.rejected.Load(); got > 10 {
		t.Errorf("the rejecting consumer saw %d copies, want at most the canary's 10", got)
	}
	counts, recs := s.auditOutcomes(t, r.Operation)
	if counts[domain.OutcomeHalted] != 1 || counts[domain.OutcomeFinal] != 0 || counts[domain.OutcomeStage] != 1 {
		t.Errorf("audit records of %s: %v; want one stage, one halted and no final record", r.Operation, counts)
	}
	for _, rec := range recs {
		if rec.Outcome == domain.OutcomeIntent && (rec.Detail["canary"] != "10" || rec.Detail["canary_wait"] != "10s" || rec.Detail["halt_at"] != "0.1") {
			t.Errorf("intent detail %v: want the canary, its wait and the halt share", rec.Detail)
		}
	}
	// A halted run ends with the log's head, as a finished one does: its
	// halt record is the operation's last until a resume.
	var head struct {
		AuditHead *domain.AuditHead `json:"audit_head"`
	}
	if err := json.Unmarshal([]byte(out), &head); err != nil || head.AuditHead == nil ||
		*head.AuditHead != audit.HeadOf(recs[len(recs)-1]) || recs[len(recs)-1].Outcome != domain.OutcomeHalted {
		t.Errorf("the halted run's audit_head %+v (%v); the operation's last record is seq %d (%s)", head.AuditHead, err, recs[len(recs)-1].Seq, recs[len(recs)-1].Outcome)
	}

	// The fix: a consumer that acks. Resume takes the halted operation
	// up with a fresh canary, and replays the copies that died too.
	bad.stop()
	good := s.consume(t, 0, takeEvery)
	out, errOut, err = runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, errOut)
	}
	rr := decodeStaged(t, out) // resume's --json carries the same fields
	if rr.Operation != r.Operation || rr.Halted || rr.Canary == nil || rr.Canary.Verdict != domain.VerdictPassed || rr.Confirmed != n {
		t.Fatalf("resume: %+v canary %+v; want operation %s finished, a passing canary, all %d published", rr, rr.Canary, r.Operation, n)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	if got := waitCount(good.acked.Load, n); got != n {
		t.Errorf("the fixed consumer acked %d, want every one of the %d events once", got, n)
	}
	counts, _ = s.auditOutcomes(t, r.Operation)
	if counts[domain.OutcomeFinal] != 1 || counts[domain.OutcomeResumed] != 1 {
		t.Errorf("audit records after resume: %v; want resumed and final", counts)
	}
}

func TestCanaryPassesWhenTheInboxAppliesItsCopies(t *testing.T) {
	const n = 150
	s := newCanaryScene(t, n, true)
	c := s.consume(t, 0, takeEvery)
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "10", "--canary-wait", "20s", "--yes", "--json")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	r := decodeStaged(t, out)
	if r.Halted || r.Canary == nil || r.Canary.Verdict != domain.VerdictPassed || r.Canary.Applied != 10 || r.Canary.Pending != 0 {
		t.Fatalf("replay: %+v canary %+v; want a canary of 10 applied", r, r.Canary)
	}
	if len(r.Stages) != 3 || r.Stages[1].Size != 100 || r.Stages[1].Verdict != domain.VerdictPassed ||
		r.Stages[2].Size != 40 || r.Stages[2].Verdict != domain.VerdictUnjudged {
		t.Errorf("stages %+v: want the canary, a stage of 100 judged, and the last 40 unjudged", r.Stages)
	}
	if r.Confirmed != n {
		t.Errorf("confirmed %d, want %d", r.Confirmed, n)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	if got := waitCount(c.acked.Load, n); got != n {
		t.Errorf("the consumer acked %d, want each of the %d once", got, n)
	}
}

func TestCanaryHaltsMidRampWhenAStageFails(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	const n = 400
	s := newCanaryScene(t, n, false)
	// The consumer takes the canary, then fails every other message.
	c := s.consume(t, 0, func(i int64) bool { return i <= 10 || i%2 == 0 })
	// A stage's deaths must be seen within the wait for it to halt; a
	// passing canary waits all of it.
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "10", "--canary-wait", "8s", "--yes", "--json")
	if app.ExitCode(err) != app.ExitHalted {
		t.Fatalf("replay: exit %d (%v), want halted\n%s", app.ExitCode(err), err, errOut)
	}
	r := decodeStaged(t, out)
	if r.Canary == nil || r.Canary.Verdict != domain.VerdictPassed || len(r.Stages) != 2 || r.Stages[1].Verdict != domain.VerdictHalted {
		t.Fatalf("stages %+v: want the canary passed and stage 1 halted", r.Stages)
	}
	if r.Confirmed > 110 || !strings.Contains(r.HaltReason, "after stage 1") {
		t.Errorf("confirmed %d, reason %q: want at most the canary and one stage (110), halted after stage 1", r.Confirmed, r.HaltReason)
	}
	// Every message is in the DLQ or was acked by the consumer. A
	// queue's depth counts ready messages only: the consumer may still
	// hold a prefetch of them, so wait for what it took.
	testkit.WaitDepth(t, s.ch, "orders", 0)
	took := func() int64 { return c.acked.Load() + c.rejected.Load() }
	if got := waitCount(took, int64(r.Confirmed)); got != int64(r.Confirmed) {
		t.Errorf("the consumer took %d copies, want the %d confirmed", got, r.Confirmed)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", n-r.Confirmed+int(c.rejected.Load()))

	// The fix, then dlq resume: a fresh canary, and the rest goes,
	// the copies that died in stage 1 with it.
	c.stop()
	fixed := s.consume(t, 0, takeEvery)
	left := n - int(c.acked.Load())
	out, errOut, err = runAction(t, s.config, newDlqResumeCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("resume after the mid-ramp halt: %v\n%s", err, errOut)
	}
	rr := decodeStaged(t, out) // resume's --json carries the same fields
	if rr.Operation != r.Operation || rr.Halted || rr.Canary == nil || rr.Canary.Verdict != domain.VerdictPassed || rr.Confirmed != left {
		t.Fatalf("resume: %+v canary %+v; want %s finished, a passing canary, the %d left published", rr, rr.Canary, r.Operation, left)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	testkit.WaitDepth(t, s.ch, "orders", 0)
	acked := func() int64 { return c.acked.Load() + fixed.acked.Load() }
	if got := waitCount(acked, n); got != n {
		t.Errorf("acked %d in all, want each of the %d once", got, n)
	}
}

// A canary waited for on a destination no consumer takes from could
// get no verdict: it is refused before anything moves, and goes out
// when the operator says not to wait for it.
func TestCanaryWithoutAConsumerIsRefusedBeforeAnythingMoves(t *testing.T) {
	s := newCanaryScene(t, 50, false)
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "5", "--canary-wait", "2s", "--yes", "--json")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "orders has no consumer") || !strings.Contains(err.Error(), "--canary-wait 0") {
		t.Fatalf("replay: exit %d (%v), want refused for lack of a consumer, naming --canary-wait 0\n%s", app.ExitCode(err), err, errOut)
	}
	// Its JSON says so too, not a run that chose nothing.
	var doc map[string]any
	if jerr := json.Unmarshal([]byte(out), &doc); jerr != nil || !strings.Contains(fmt.Sprint(doc["error"]), "orders has no consumer") {
		t.Errorf("the JSON of the refused run: %v\n%s", jerr, out)
	}
	if got := testkit.Depth(t, s.ch, "orders"); got != 0 {
		t.Errorf("orders holds %d after a refused canary, want nothing published", got)
	}
	if got := testkit.Depth(t, s.ch, "orders.dlq"); got != 50 {
		t.Errorf("orders.dlq holds %d after a refused canary, want its 50", got)
	}
	// Asked (here a dry run, which plans as a prompt does), the plan
	// refuses it before the question.
	if _, _, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "5", "--canary-wait", "2s", "--dry-run"); app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "orders has no consumer") {
		t.Errorf("replay --dry-run: exit %d (%v), want the plan refused for lack of a consumer", app.ExitCode(err), err)
	}
	out, errOut, err = runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "5", "--canary-wait", "0", "--yes", "--json")
	if err != nil {
		t.Fatalf("replay --canary-wait 0: %v\n%s", err, errOut)
	}
	if r := decodeStaged(t, out); r.Canary == nil || r.Canary.Verdict != domain.VerdictUnjudged {
		t.Fatalf("replay --canary-wait 0: %+v canary %+v; want the canary unjudged", r, r.Canary)
	}
	testkit.WaitDepth(t, s.ch, "orders", 50)
}

func TestCanaryRefusesWhenNothingCouldJudgeIt(t *testing.T) {
	// The default exchange feeds the DLQ and no inbox is configured.
	s := newEmptyActScene(t, "")
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-1", Body: []byte("b")}})
	_, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--canary", "1", "--yes")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "default exchange") {
		t.Fatalf("replay: exit %d (%v), want refused naming the default exchange\n%s", app.ExitCode(err), err, errOut)
	}
	if got := testkit.Depth(t, s.ch, "orders.dlq"); got != 1 {
		t.Errorf("orders.dlq holds %d, want its message untouched", got)
	}
	// The log says the run failed, and that what it recorded as
	// publishing was never sent: not "done", not possibly published.
	st, err := audit.OpenFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var recs []audit.Record
	if err := st.Scan(t.Context(), func(r audit.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	sums := audit.Summaries(recs)
	if len(sums) != 1 || sums[0].State() != "failed" || !strings.Contains(sums[0].Failed, "default exchange") {
		t.Fatalf("the refused run's summary: %+v", sums)
	}
	publishing := 0
	for _, r := range recs {
		if r.Outcome == domain.OutcomePublishing {
			publishing += len(r.MessageIDs)
		}
	}
	if publishing > 0 && sums[0].Counts[domain.OutcomeNotSent] != publishing {
		t.Errorf("%d recorded publishing, %d recorded not sent: the others read as possibly published", publishing, sums[0].Counts[domain.OutcomeNotSent])
	}
}

func TestRateAutoFollowsAPacedConsumer(t *testing.T) {
	const n = 500
	s := newCanaryScene(t, n, false)
	// Refused without a consumer to pace by, before anything moves.
	_, _, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--rate", "auto", "--yes")
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), "no consumer") {
		t.Fatalf("replay --rate auto without consumers: %v, want refused", err)
	}
	// A consumer that takes 100 messages per second.
	c := s.consume(t, 10*time.Millisecond, takeEvery)
	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		conn := testkit.Dial(t, s.vhost)
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			q, err := ch.QueueDeclarePassive("orders", true, false, false, false, nil)
			if err != nil {
				return
			}
			if int64(q.Messages) > peak.Load() {
				peak.Store(int64(q.Messages))
			}
		}
	}()
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--rate", "auto", "--yes", "--json")
	close(stop)
	<-watched
	if err != nil {
		t.Fatalf("replay --rate auto: %v\n%s", err, errOut)
	}
	if r := decodeStreamed(t, out); r.Confirmed != n {
		t.Errorf("confirmed %d, want %d", r.Confirmed, n)
	}
	// 3 seconds of the consumer's rate above the starting depth (0).
	if p := peak.Load(); p > 300 {
		t.Errorf("orders peaked at %d ready messages, want at most 300 (3 s of its consumer)", p)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
	_ = c
}

// waitCount polls count until it reaches want or 15 seconds pass, and
// returns its last value. A queue's depth reaching zero does not mean
// its consumer is done: up to its prefetch may still be in its hands.
func waitCount(count func() int64, want int64) int64 {
	deadline := time.Now().Add(15 * time.Second)
	for count() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return count()
}
