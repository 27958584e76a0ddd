package dlq

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The integration tests run against the broker the design names; a missing
// broker fails them.
const (
	testAMQP = "amqp://guest:guest@127.0.0.1:5672/"
	testMgmt = "http://127.0.0.1:15672"
)

func mgmtCall(t testing.TB, method, path, body string) {
	t.Helper()
	req, err := http.NewRequest(method, testMgmt+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("management API at %s unreachable (RabbitMQ with the management plugin must run): %v", testMgmt, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %s %s", method, path, resp.Status, b)
	}
}

// testVhost creates a vhost of its own for one test and connects to it.
func testVhost(t testing.TB) (string, *amqp.Connection) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	vhost := "warren-dlq-" + hex.EncodeToString(b[:])
	esc := url.PathEscape(vhost)
	mgmtCall(t, http.MethodPut, "/api/vhosts/"+esc, "")
	t.Cleanup(func() { mgmtCall(t, http.MethodDelete, "/api/vhosts/"+esc, "") })
	mgmtCall(t, http.MethodPut, "/api/permissions/"+esc+"/guest", `{"configure":".*","write":".*","read":".*"}`)
	conn, err := amqp.Dial(testAMQP + esc)
	if err != nil {
		t.Fatalf("RabbitMQ at 127.0.0.1:5672 unreachable: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return vhost, conn
}

func mustChannel(t testing.TB, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

func declare(t testing.TB, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
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
		req, _ := http.NewRequest(http.MethodGet, testMgmt+"/api/connections?columns=name,user_provided_name", nil)
		req.SetBasicAuth("guest", "guest")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var conns []struct {
			Name     string `json:"name"`
			Provided string `json:"user_provided_name"`
		}
		err = json.NewDecoder(resp.Body).Decode(&conns)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range conns {
			if c.Provided == name {
				mgmtCall(t, http.MethodDelete, "/api/connections/"+url.PathEscape(c.Name), "")
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connection %s never appeared in the management API", name)
}

func fmtID(i int) string { return fmt.Sprintf("evt-%04d", i) }
