//go:build integration

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/testkit"
)

// expire has the broker dead-letter n messages from orders into
// orders.dlq by expiry: each is published with an expiration of 0, so it
// dies the moment it reaches the queue, with orders as its origin.
// header(i) gives message i's headers.
func (s *actScene) expire(t *testing.T, n int, header func(i int) amqp.Table) {
	t.Helper()
	before := testkit.Depth(t, s.ch, "orders.dlq")
	for i := range n {
		var h amqp.Table
		if header != nil {
			h = header(i)
		}
		err := s.ch.Publish("", "orders", false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("m-%06d", i), Expiration: "0", Headers: h, Body: []byte(fmt.Sprintf(`{"n":%d}`, i)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", before+n)
}

type streamedJSON struct {
	Operation      string `json:"operation"`
	Selected       int    `json:"selected"`
	SkippedApplied int    `json:"skipped_applied"`
	Confirmed      int    `json:"confirmed"`
	Returned       int    `json:"returned"`
	Nacked         int    `json:"nacked"`
	Unknown        int    `json:"unknown"`
}

func decodeStreamed(t *testing.T, out string) streamedJSON {
	t.Helper()
	var r streamedJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return r
}

// messageIDs lists a queue's messages in order, through warren's own
// listing, which returns them as it found them.
func (s *actScene) messageIDs(t *testing.T, queue string, n int) []string {
	t.Helper()
	for try := 1; ; try++ {
		out, errOut, err := runAction(t, s.config, newDlqLsCmd, queue, "--json", "--limit", fmt.Sprint(max(n, 1)))
		if err != nil {
			t.Fatalf("dlq ls %s: %v\n%s", queue, err, errOut)
		}
		var ls struct {
			Complete bool `json:"complete"`
			Messages []struct {
				MessageID string `json:"message_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			t.Fatal(err)
		}
		// On a busy broker a browse that waits a second for the next
		// delivery ends early and says so: read again.
		if !ls.Complete && len(ls.Messages) < n && try < 5 {
			continue
		}
		ids := make([]string, len(ls.Messages))
		for i, m := range ls.Messages {
			ids[i] = m.MessageID
		}
		return ids
	}
}

func TestDlqReplayMovesTwoHundredThousandInOneCommand(t *testing.T) {
	t.Parallel()
	const n = 200_000
	s := newEmptyActScene(t, "")
	s.expire(t, n, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errOut, err := runActionCtx(ctx, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	if r := decodeStreamed(t, out); r.Selected != n || r.Confirmed != n || r.Returned+r.Nacked+r.Unknown != 0 {
		t.Fatalf("replay of %d: %+v", n, r)
	}
	testkit.WaitDepth(t, s.ch, "orders", n)
	testkit.WaitDepth(t, s.ch, "orders.dlq", 0)
}

// Half the messages do not match the filter: they stay, in their order,
// although there are more of them than one consumer's window can hold.
func TestDlqReplayWithAFilterKeepsTheRestInOrder(t *testing.T) {
	t.Parallel()
	s := newEmptyActScene(t, "")
	s.replayOddKeepingEven(t, 20_000)
}

// A user whose max-channels limit leaves little room: the broker closes
// the whole connection of a channel opened past the limit, so a filtered
// replay, which spreads what it keeps over channels (four here, without
// a limit), reads within the room the user has and finishes.
func TestAFilteredReplayStaysWithinTheUsersChannelLimit(t *testing.T) {
	t.Parallel()
	s := newEmptyActScene(t, "")
	user := s.loginAs(t, "limited", ".*", ".*")
	testkit.Mgmt(t, http.MethodPut, "/api/user-limits/"+url.PathEscape(user)+"/max-channels", map[string]int{"value": 3})
	s.replayOddKeepingEven(t, 4000)
}

// loginAs makes a monitoring user for the scene's vhost alone, with the
// configure and write permissions given (read on everything), and points
// the scene's config at it; the user goes when t ends.
func (s *actScene) loginAs(t *testing.T, role, configure, write string) string {
	t.Helper()
	user := "warren-" + role + "-" + strings.TrimPrefix(s.vhost, "warren-cli-actions-")
	testkit.Mgmt(t, http.MethodPut, "/api/users/"+url.PathEscape(user), map[string]string{"password": role, "tags": "monitoring"})
	t.Cleanup(func() { testkit.Mgmt(t, http.MethodDelete, "/api/users/"+url.PathEscape(user), nil) })
	testkit.Mgmt(t, http.MethodPut, "/api/permissions/"+url.PathEscape(s.vhost)+"/"+url.PathEscape(user),
		map[string]string{"configure": configure, "write": write, "read": ".*"})
	env := "WARREN_" + strings.ToUpper(role) + "_TEST_PASSWORD"
	testEnv(env, role)
	cfg, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.NewReplacer(`username = "guest"`, fmt.Sprintf("username = %q", user),
		"WARREN_ACTIONS_TEST_PASSWORD", env).Replace(string(cfg)))
	if err := os.WriteFile(s.config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return user
}

// A user who may read the DLQ but not write or declare: a replay stops
// at the first copy the broker refuses, saying which permission is
// missing, and a quarantine refuses before anything moves; every message
// stays in the DLQ.
func TestAUserWhoMayNotWriteIsToldWhichPermissionIsMissing(t *testing.T) {
	t.Parallel()
	const n = 600
	s := newEmptyActScene(t, "")
	s.loginAs(t, "readonly", "", "")
	s.expire(t, n, nil)
	_, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes")
	if err == nil || !strings.Contains(err.Error(), "ACCESS_REFUSED") || !strings.Contains(err.Error(), "needs the write permission") {
		t.Fatalf("replay without write permission: %v\n%s", err, errOut)
	}
	_, errOut, err = runAction(t, s.config, newDlqQuarantineCmd, "orders.dlq", "--yes", "--reason", "bad payload")
	if err == nil || !strings.Contains(err.Error(), "needs the configure permission on orders.dlq.quarantine") ||
		!strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("quarantine without configure permission: %v\n%s", err, errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", n)
	if got := testkit.Depth(t, s.ch, "orders"); got != 0 {
		t.Fatalf("orders holds %d copies; the broker refused every publish", got)
	}
}

// replayOddKeepingEven dead-letters n messages, every other one marked
// odd, replays the odd ones with a filter, and checks that they were
// confirmed and that the even ones stay in the DLQ in their order.
func (s *actScene) replayOddKeepingEven(t *testing.T, n int) {
	t.Helper()
	s.expire(t, n, func(i int) amqp.Table {
		return amqp.Table{"parity": []string{"even", "odd"}[i%2]}
	})
	// Not a timed test: on a busy machine the run may take minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errOut, err := runActionCtx(ctx, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json", "--filter", `header("parity") == "odd"`)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	if r := decodeStreamed(t, out); r.Confirmed != n/2 {
		t.Fatalf("replayed %+v, want %d confirmed", r, n/2)
	}
	testkit.WaitDepth(t, s.ch, "orders", n/2)
	testkit.WaitDepth(t, s.ch, "orders.dlq", n/2)
	var want []string
	for i := 0; i < n; i += 2 {
		want = append(want, fmt.Sprintf("m-%06d", i))
	}
	if got := s.messageIDs(t, "orders.dlq", n); !slices.Equal(got, want) {
		t.Fatalf("the DLQ keeps %d messages, want the %d even ones in their order", len(got), len(want))
	}
}

// A replayed message that fails again dies back into the DLQ during the
// run; the operation takes only the messages the queue held when it
// started, so none is replayed twice.
func TestDlqReplayTakesNoMessageTwice(t *testing.T) {
	const n = 3000
	s := newEmptyActScene(t, "")
	s.expire(t, n, nil)
	rejector := testkit.Channel(t, testkit.Dial(t, s.vhost))
	deliveries, err := rejector.Consume("orders", "rejector", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rejected atomic.Int64
	go func() {
		for d := range deliveries {
			_ = d.Reject(false)
			rejected.Add(1)
		}
	}()
	out, errOut, err := runAction(t, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	if r := decodeStreamed(t, out); r.Confirmed != n {
		t.Fatalf("replayed %+v, want %d confirmed", r, n)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", n)
	if got := waitCount(rejected.Load, n); got != n {
		t.Errorf("the consumer saw %d copies, want each of the %d once", got, n)
	}
	s.checkReplayCounts(t, n, 1)
}

// checkReplayCounts asserts every message of orders.dlq was replayed
// exactly times times.
func (s *actScene) checkReplayCounts(t *testing.T, n, times int) {
	t.Helper()
	out, errOut, err := runAction(t, s.config, newDlqStatsCmd, "orders.dlq", "--json")
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, errOut)
	}
	var st struct {
		Total       int `json:"total"`
		ReplayLoops int `json:"replay_loops"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Total != n || st.ReplayLoops != n {
		t.Errorf("the DLQ holds %d messages, %d of them back from a replay; want %d, all replayed %d time(s)", st.Total, st.ReplayLoops, n, times)
	}
}

// Cancelling stops publishing; what is in flight settles; nothing is
// rolled back and nothing is lost.
func TestDlqReplayCancelledHalfwayLosesNothing(t *testing.T) {
	const n = 2000
	s := newEmptyActScene(t, "")
	s.expire(t, n, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// At 400 msg/s the run takes five seconds: cancel once 200 copies
	// reached orders, however long the run took to start.
	watch := testkit.Channel(t, testkit.Dial(t, s.vhost))
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			q, err := watch.QueueDeclarePassive("orders", true, false, false, false, nil)
			if err != nil || q.Messages >= 200 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	out, errOut, err := runActionCtx(ctx, s.config, newDlqReplayCmd, "orders.dlq", "--yes", "--json", "--rate", "400")
	r := decodeStreamed(t, out)
	if r.Confirmed == 0 || r.Confirmed >= n {
		t.Fatalf("cancelled run confirmed %d of %d (%v)\n%s", r.Confirmed, n, err, errOut)
	}
	if !strings.Contains(errOut, fmt.Sprintf("cancelled: %d moved, the other %d of the %d it was walking stay in orders.dlq", r.Confirmed, n-r.Confirmed, n)) {
		t.Errorf("stderr %q does not say how many moved and how many stay, those it never read among them", errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders", r.Confirmed)
	testkit.WaitDepth(t, s.ch, "orders.dlq", n-r.Confirmed)
}
