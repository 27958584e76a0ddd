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

// waitReady polls the queue's ready count until it is n.
func waitReady(t testing.TB, conn *amqp.Connection, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	last := -1
	for time.Now().Before(deadline) {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("inspect %s: %v", queue, err)
		}
		ch.Close()
		if last = q.Messages; last == n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("queue %s: %d ready messages, want %d", queue, last, n)
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
