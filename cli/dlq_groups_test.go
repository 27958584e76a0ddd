//go:build integration

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// errorQueueScene is a vhost where MassTransit-style consumers moved five
// orders to orders_error (two failure groups, header names from
// MassTransit's MessageHeaders.cs), and a team's own convention wrote two
// messages to billing_failed with nested headers.
type errorQueueScene struct {
	vhost, config string
	ch            *amqp.Channel
}

func newErrorQueueScene(t *testing.T) *errorQueueScene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-cli-groups")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	for _, q := range []string{"orders", "orders_error", "billing", "billing_failed"} {
		testkit.Declare(t, ch, q, nil)
	}
	fault := func(id, typ, msg string) amqp.Publishing {
		return amqp.Publishing{MessageId: id, Body: []byte(`{"id":"` + id + `"}`), Headers: amqp.Table{
			"MT-Reason": "fault", "MT-Fault-ExceptionType": typ, "MT-Fault-Message": msg,
			"MT-Fault-InputAddress": "rabbitmq://localhost/" + vhost + "/orders",
			"MT-Fault-Timestamp":    time.Now().UTC().Format(time.RFC3339Nano),
		}}
	}
	for i, p := range []amqp.Publishing{
		fault("o-1", "Orders.OrderNotFoundException", "Order 1001 not found"),
		fault("o-2", "Orders.OrderNotFoundException", "Order 1002 not found"),
		fault("o-3", "Orders.OrderNotFoundException", "Order 1003 not found"),
		fault("o-4", "System.TimeoutException", "Stock service timed out after 30000 ms"),
		fault("o-5", "System.TimeoutException", "Stock service timed out after 30000 ms"),
	} {
		if err := ch.Publish("", "orders_error", false, false, p); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	for _, id := range []string{"b-1", "b-2"} {
		if err := ch.Publish("", "billing_failed", false, false, amqp.Publishing{MessageId: id, Body: []byte(id),
			Headers: amqp.Table{"x-acme": amqp.Table{"error": "Invoice 7 has no customer", "class": "NoCustomer", "source": "billing"}}}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, ch, "orders_error", 5)
	testkit.WaitDepth(t, ch, "billing_failed", 2)
	dir := t.TempDir()
	s := &errorQueueScene{vhost: vhost, ch: ch, config: filepath.Join(dir, "warren.toml")}
	t.Setenv("WARREN_GROUPS_TEST_PASSWORD", "guest")
	text := fmt.Sprintf(`[contexts.t]
amqp_url = %q
management_url = %q
username = "guest"
password_env = "WARREN_GROUPS_TEST_PASSWORD"
vhost = %q
audit = "file:%s"

[[contexts.t.conventions]]
name = "acme"
queues = ["*_failed"]
error_message = "x-acme.error"
error_type = "x-acme.class"
origin_queue = "x-acme.source"
`, testAMQP, testMgmt, vhost, filepath.Join(dir, "audit.jsonl"))
	if err := os.WriteFile(s.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDlqGroupsListsTheFailureGroupsOfAFrameworksErrorQueue(t *testing.T) {
	s := newErrorQueueScene(t)
	out, errOut, err := runDlq(t, s.config, "groups", "orders_error", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var got groupsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Total != 5 || !got.Complete || len(got.Groups) != 2 {
		t.Fatalf("groups %+v", got)
	}
	top := got.Groups[0]
	want := domain.GroupOf(domain.Failure{Convention: domain.ConventionMassTransit, Kind: domain.KindException, OriginQueue: "orders",
		ErrorType: "Orders.OrderNotFoundException", ErrorMessage: "Order 1 not found"})
	if top.ID != want || top.Count != 3 || top.Convention != "masstransit" || top.Origin != "orders" ||
		top.Message != "Order <n> not found" || top.ErrorType != "Orders.OrderNotFoundException" || top.FirstFailed == nil {
		t.Errorf("top group %+v, want ID %s", top, want)
	}
	if top.Applied != nil || top.Pending != nil {
		t.Error("without an inbox the counts must be null, not 0")
	}
	// Given back with one nack, which the broker requeues after the
	// channel's close-ok: the five are back, none taken.
	testkit.WaitDepth(t, s.ch, "orders_error", 5)
	text, _, err := runDlq(t, s.config, "groups", "orders_error")
	if err != nil || !strings.Contains(text, want) || !strings.Contains(text, "OrderNotFoundException") || !strings.Contains(text, "2 failure groups") {
		t.Errorf("text: %v\n%s", err, text)
	}
}

func TestAGroupIsListedAndReplayedAlone(t *testing.T) {
	s := newErrorQueueScene(t)
	timeout := domain.GroupOf(domain.Failure{Convention: domain.ConventionMassTransit, Kind: domain.KindException, OriginQueue: "orders",
		ErrorType: "System.TimeoutException", ErrorMessage: "Stock service timed out after 30000 ms"})
	out, _, err := runDlq(t, s.config, "ls", "orders_error", "--group", timeout[:6], "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ls lsJSON
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Messages) != 2 {
		t.Fatalf("--group listed %d messages, want the 2 timeouts", len(ls.Messages))
	}
	for _, m := range ls.Messages {
		if m.Group != timeout || m.Convention != "masstransit" || m.ErrorType != "System.TimeoutException" ||
			m.ErrorMessage != "Stock service timed out after 30000 ms" || m.OriginQueue != "orders" || m.Reason != domain.KindException {
			t.Errorf("listed %+v", m)
		}
	}
	if _, errOut, err := runDlq(t, s.config, "ls", "orders_error", "--group", "xyz"); app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), "4 to 10 hex digits") {
		t.Errorf("a bad group ID: exit %d, %v %s", app.ExitCode(err), err, errOut)
	}

	out, errOut, err := runDlq(t, s.config, "replay", "orders_error", "--group", timeout, "--yes")
	if err != nil {
		t.Fatalf("replay: %v\n%s%s", err, out, errOut)
	}
	testkit.WaitDepth(t, s.ch, "orders", 2)
	testkit.WaitDepth(t, s.ch, "orders_error", 3)
	for range 2 {
		d, ok, err := s.ch.Get("orders", true)
		if err != nil || !ok || (d.MessageId != "o-4" && d.MessageId != "o-5") || d.Headers["MT-Fault-ExceptionType"] != "System.TimeoutException" {
			t.Errorf("orders received %v %v %q %v", ok, err, d.MessageId, d.Headers)
		}
	}
}

func TestATeamsOwnConventionIsRead(t *testing.T) {
	s := newErrorQueueScene(t)
	out, _, err := runDlq(t, s.config, "ls", "billing_failed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ls lsJSON
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Messages) != 2 {
		t.Fatalf("%d messages", len(ls.Messages))
	}
	for _, m := range ls.Messages {
		if m.Convention != "acme" || m.OriginQueue != "billing" || m.ErrorType != "NoCustomer" || m.ErrorMessage != "Invoice 7 has no customer" {
			t.Errorf("read %+v", m)
		}
	}
	// billing_failed pairs with billing by no naming warren knows, and
	// headers alone confirm nothing: the replay keeps them.
	out, _, err = runDlq(t, s.config, "replay", "billing_failed", "--dry-run")
	if err != nil || !strings.Contains(out, "2 stay: destination not confirmed") {
		t.Errorf("dry run: %v\n%s", err, out)
	}
}

// NServiceBus's shared error queue serves every endpoint: it pairs with
// Sales only once its messages are read, and the pairing is kept for the
// next command. A pairing learned from messages confirms no destination.
func TestASharedErrorQueuePairsByWhatItsMessagesSay(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s := newErrorQueueScene(t)
	testkit.Declare(t, s.ch, "Sales", nil)
	testkit.Declare(t, s.ch, "error", nil)
	// Header names: NServiceBus's FaultsHeaderKeys.cs.
	if err := s.ch.Publish("", "error", false, false, amqp.Publishing{MessageId: "n-1", Body: []byte("<PlaceOrder/>"), Headers: amqp.Table{
		"NServiceBus.FailedQ": "Sales", "NServiceBus.ExceptionInfo.ExceptionType": "System.InvalidOperationException",
		"NServiceBus.ExceptionInfo.Message": "Customer 7 is on hold", "NServiceBus.TimeOfFailure": "2026-12-04 03:15:02:123456 Z",
	}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "error", 1)
	pairing := func() (sales *statusQueue, errq *statusQueue) {
		r := execCLI(t, "--config", s.config, "status", "--json")
		if r.err != nil {
			t.Fatalf("status: %v\n%s", r.err, r.errOut)
		}
		var st statusJSON
		if err := json.Unmarshal([]byte(r.out), &st); err != nil {
			t.Fatal(err)
		}
		for i := range st.Queues {
			switch st.Queues[i].Name {
			case "Sales":
				sales = &st.Queues[i]
			case "error":
				errq = &st.Queues[i]
			}
		}
		return sales, errq
	}
	sales, errq := pairing()
	if sales.DLQ != nil || errq == nil || !errq.ErrorQueue {
		t.Fatalf("before reading: Sales pairs with %+v; error is an error queue: %v", sales.DLQ, errq != nil && errq.ErrorQueue)
	}
	if _, _, err := runDlq(t, s.config, "ls", "error"); err != nil {
		t.Fatal(err)
	}
	sales, errq = pairing()
	if sales.DLQ == nil || sales.DLQ.Name != "error" || sales.DLQ.Pairing != "messages" ||
		len(errq.DLQOf) != 1 || errq.DLQOf[0].Name != "Sales" || errq.DLQOf[0].Pairing != "messages" {
		t.Fatalf("after reading: Sales pairs with %+v, error serves %+v", sales.DLQ, errq.DLQOf)
	}
	out, _, err := runDlq(t, s.config, "replay", "error", "--dry-run")
	if err != nil || !strings.Contains(out, "1 stay: destination not confirmed") {
		t.Errorf("a pairing learned from messages confirmed the destination: %v\n%s", err, out)
	}
}
