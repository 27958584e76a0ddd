//go:build integration

package ops

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
)

// testAMQP is the broker under test (WARREN_TEST_BROKER picks 3.10 or 4.3).
var testAMQP = testkit.AMQPURL

func dial(vhost string) (*amqp.Connection, error) {
	return broker.Dial(broker.Options{URL: testAMQP, Username: "guest", Password: "guest", Vhost: vhost, Name: "warren ops test"})
}

func testConn(t *testing.T, vhost string) *amqp.Connection {
	t.Helper()
	conn, err := dial(vhost)
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable: %v", testAMQP, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rejectedScene makes orders dead-letter into orders.dlq and has the
// broker dead-letter n messages there by rejecting them.
func rejectedScene(t *testing.T, vhost string, n int) {
	t.Helper()
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", orderEvents(n))
}

// orderEvents are n order events whose logical IDs, in header event_id,
// are ev-a, ev-b, ...
func orderEvents(n int) []amqp.Publishing {
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		id := "ev-" + string(rune('a'+i))
		msgs[i] = amqp.Publishing{
			MessageId: "m-" + id, ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`),
		}
	}
	return msgs
}

func newOps(t *testing.T, c *config.Context) *Ops {
	t.Helper()
	m, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := New(Clients{
		Context: c, Operator: "tester", Mgmt: m, Dial: dial,
		OpenAudit: func() (audit.Store, error) { return audit.OpenFile(path) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
