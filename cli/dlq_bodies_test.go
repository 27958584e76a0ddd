//go:build integration

package cli

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/text/format"
)

// straightIntoTheDLQ publishes a message with logical ID E-9 into
// orders.dlq itself, so it carries no x-death, beside the four the broker
// rejected; its body is text with two bytes that are not UTF-8.
func straightIntoTheDLQ(t *testing.T, s *dlqScene) []byte {
	t.Helper()
	body := []byte("{\"id\": 4\xff\xfe}\n")
	if err := s.ch.Publish("", "orders.dlq", false, false, amqp.Publishing{
		MessageId: "m-E-9", ContentType: "application/json", Headers: amqp.Table{"event_id": "E-9"}, Body: body,
	}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
	return body
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func TestDlqTextSaysWhichMessagesTheBrokerNeverDeadLettered(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	body := straightIntoTheDLQ(t, s)

	show, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", "E-9")
	if err != nil {
		t.Fatal(err)
	}
	if l := lineWith(show, "reason"); !strings.Contains(l, "not dead-lettered by the broker (no x-death)") {
		t.Errorf("dlq show's reason line %q does not say the broker never dead-lettered it:\n%s", l, show)
	}
	for _, blank := range []string{"dead-lettered  —", "no later than —", "origin  "} {
		if strings.Contains(show, blank) {
			t.Errorf("dlq show still prints %q for a message without x-death:\n%s", blank, show)
		}
	}
	// The body is text with two bad bytes: a hex dump, not "binary".
	dump := `00000000  7b 22 69 64 22 3a 20 34  ff fe 7d 0a              |{"id": 4..}.|`
	if !strings.Contains(show, "body (bytes, 12 B):\n"+dump+"\n") {
		t.Errorf("dlq show does not dump the body as hex with an ASCII column:\n%s", show)
	}

	dead, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", "E-2")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dead, "no x-death") || !strings.Contains(lineWith(dead, "reason"), "rejected") ||
		!strings.Contains(lineWith(dead, "origin"), "queue orders") || !strings.Contains(lineWith(dead, "dead-lettered"), "ago (no later than 20") {
		t.Errorf("dlq show of a message the broker rejected:\n%s", dead)
	}
	if !strings.Contains(dead, "body (json, 12 B):\n{\n  \"id\": \"E-2\"\n}\n") {
		t.Errorf("dlq show does not indent a JSON body:\n%s", dead)
	}

	ls, _, err := runDlq(t, s.config, "ls", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if row := strings.Fields(lineWith(ls, "E-9")); len(row) < 5 || strings.Join(row[2:5], " ") != "no x-death —" {
		t.Errorf("dlq ls row for E-9 = %q, want REASON no x-death and ORIGIN —", row)
	}
	if row := strings.Fields(lineWith(ls, "E-2")); len(row) < 4 || row[2] != "rejected" || row[3] != "orders" {
		t.Errorf("dlq ls row for E-2 = %q, want rejected from orders", row)
	}
	if !strings.Contains(ls, "\n"+format.NoDeathLegend+"\n") {
		t.Errorf("dlq ls does not explain the mark:\n%s", ls)
	}

	// JSON keeps its fields as they were: empty, and the body exact.
	out, _, err := runDlq(t, s.config, "show", "orders.dlq", "--id", "E-9", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []showJSON `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	m := got.Messages[0]
	if m.Reason != "" || m.OriginQueue != "" || m.DeadLetteredAt != nil || len(m.Deaths) != 0 ||
		m.BodyEncoding != "base64" || m.Body != base64.StdEncoding.EncodeToString(body) {
		t.Errorf("dlq show --json changed: %+v", m)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
}

func TestDlqReplaySaysWhenMessagesShareALogicalID(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	// A second copy of E-2, rejected by the broker like the first.
	s.declare(t, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	testkit.DeadLetter(t, s.ch, "orders", "orders.dlq", []amqp.Publishing{
		{MessageId: "m-E-2-again", Headers: amqp.Table{"event_id": "E-2"}, Body: []byte(`{"id":"E-2","again":true}`)},
	})
	filter := `logical_id in ["E-2", "E-3"]`
	out, _, err := runDlq(t, s.config, "replay", "orders.dlq", "--filter", filter, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Replay 3 messages, 2 logical IDs: 1 duplicated (") {
		t.Errorf("the question does not count the logical IDs:\n%s", out)
	}
	out, _, err = runDlq(t, s.config, "replay", "orders.dlq", "--filter", `logical_id in ["E-2", "E-3"] && message_id != "m-E-2-again"`, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Replay 2 messages (") || strings.Contains(out, "logical ID") {
		t.Errorf("distinct logical IDs are still counted aloud:\n%s", out)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 5)
}
