package actions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	testAMQP = "amqp://guest:guest@127.0.0.1:5672/"
	testMgmt = "http://127.0.0.1:15672"
)

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// testVhost creates a vhost of its own for t, grants guest on it and
// deletes it (with everything in it) when t ends.
func testVhost(t testing.TB) string {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "warren-actions-" + strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	name += "-" + hex.EncodeToString(rnd[:])
	mgmtCall(t, http.MethodPut, "/api/vhosts/"+url.PathEscape(name), nil)
	mgmtCall(t, http.MethodPut, "/api/permissions/"+url.PathEscape(name)+"/guest",
		map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	t.Cleanup(func() { mgmtCall(t, http.MethodDelete, "/api/vhosts/"+url.PathEscape(name), nil) })
	return name
}

func mgmtCall(t testing.TB, method, path string, body any) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, testMgmt+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("management API at %s unreachable (is RabbitMQ with the management plugin running?): %v", testMgmt, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out)
	}
	return out
}

// dial connects to vhost and closes the connection when t ends.
func dial(t testing.TB, vhost string) *amqp.Connection {
	t.Helper()
	conn, err := amqp.DialConfig(testAMQP, amqp.Config{Vhost: vhost, Heartbeat: 10 * time.Second})
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable: %v", testAMQP, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func channel(t testing.TB, conn *amqp.Connection) *amqp.Channel {
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

// depth is the queue's ready count straight from the broker (no stats lag).
func depth(t testing.TB, ch *amqp.Channel, name string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect %s: %v", name, err)
	}
	return q.Messages
}

// waitDepth polls until name holds want ready messages.
func waitDepth(t testing.TB, ch *amqp.Channel, name string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := depth(t, ch, name)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s holds %d messages, want %d", name, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drain takes every message of name (acking them) until it is empty.
func drain(t testing.TB, ch *amqp.Channel, name string) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := ch.Get(name, false)
		if err != nil {
			t.Fatalf("get from %s: %v", name, err)
		}
		if !ok {
			return out
		}
		if err := d.Ack(false); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func msgID(i int) string { return fmt.Sprintf("m-%05d", i) }
