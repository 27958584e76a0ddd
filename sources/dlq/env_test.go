//go:build integration

package dlq

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/testkit"
)

// testVhost creates a vhost of its own for one test and connects to it.
func testVhost(t testing.TB) (string, *amqp.Connection) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-dlq")
	return vhost, testkit.Dial(t, vhost)
}

func publish(t testing.TB, ch *amqp.Channel, exchange, key string, p amqp.Publishing) {
	t.Helper()
	if err := ch.Publish(exchange, key, false, false, p); err != nil {
		t.Fatalf("publish to %s/%s: %v", exchange, key, err)
	}
}

// waitReady polls the queue's ready count until it is n, for as long as
// it moves (testkit.WaitDepth): a broker busy with other tests
// dead-letters 100 000 messages in well over 15 s.
func waitReady(t testing.TB, conn *amqp.Connection, queue string, n int) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	defer ch.Close()
	testkit.WaitDepth(t, ch, queue, n)
}

// closeConnection has the broker close the connection the client named
// name, as an operator or a failing node would.
func closeConnection(t testing.TB, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var conns []struct {
			Name     string `json:"name"`
			Provided string `json:"user_provided_name"`
		}
		if err := json.Unmarshal(testkit.Mgmt(t, http.MethodGet, "/api/connections?columns=name,user_provided_name", nil), &conns); err != nil {
			t.Fatal(err)
		}
		for _, c := range conns {
			if c.Provided == name {
				testkit.Mgmt(t, http.MethodDelete, "/api/connections/"+url.PathEscape(c.Name), "")
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connection %s never appeared in the management API", name)
}

func fmtID(i int) string { return fmt.Sprintf("evt-%04d", i) }
