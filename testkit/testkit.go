// Package testkit holds what warren's integration tests share: the
// addresses of the local RabbitMQ and PostgreSQL, a vhost of one's own
// that is removed afterwards, management API calls and queue depths read
// straight from the broker. A missing service fails the test, with what
// to start; it never skips.
//
// Two brokers run beside each other (make services): the system's 3.10
// and 4.3 from Debian testing. WARREN_TEST_BROKER (3.10, the default, or
// 4.3) picks one; WARREN_TEST_AMQP_URL and WARREN_TEST_MGMT_URL override
// its addresses.
package testkit

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The services the tests use; the environment may point elsewhere.
var (
	Broker  = env("WARREN_TEST_BROKER", "3.10")
	AMQPURL = env("WARREN_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:"+ports().amqp+"/")
	MgmtURL = env("WARREN_TEST_MGMT_URL", "http://127.0.0.1:"+ports().mgmt)
	// MetricsURL is the broker's Prometheus endpoint (rabbitmq_prometheus).
	MetricsURL = env("WARREN_TEST_METRICS_URL", "http://127.0.0.1:"+ports().metrics)
	PGDSN      = env("WARREN_TEST_PG_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
)

// brokerPorts are where make services puts each broker.
type brokerPorts struct{ amqp, mgmt, metrics string }

func ports() brokerPorts {
	if env("WARREN_TEST_BROKER", "3.10") == "4.3" {
		return brokerPorts{"5673", "15673", "15695"}
	}
	return brokerPorts{"5672", "15672", "15692"}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// client keeps no idle connections: the broker here may have few file
// descriptors, and parallel test packages would hold hundreds.
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Mgmt calls the management API as guest and returns the answer's body.
// body is nil, raw JSON text, or a value to encode.
func Mgmt(t testing.TB, method, path string, body any) []byte {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, MgmtURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("management API at %s unreachable (start RabbitMQ with the management plugin: make services): %v", MgmtURL, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out)
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// Vhost creates a vhost for t alone, named after prefix and the test,
// grants guest on it, and deletes it with everything in it when t ends.
// It fails t when the broker is not the version WARREN_TEST_BROKER names.
func Vhost(t testing.TB, prefix string) string {
	t.Helper()
	CheckVersion(t)
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := prefix + "-" + strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	name += "-" + hex.EncodeToString(rnd[:])
	Mgmt(t, http.MethodPut, "/api/vhosts/"+url.PathEscape(name), nil)
	Mgmt(t, http.MethodPut, "/api/permissions/"+url.PathEscape(name)+"/guest",
		map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	t.Cleanup(func() { Mgmt(t, http.MethodDelete, "/api/vhosts/"+url.PathEscape(name), nil) })
	return name
}

// Dial connects to vhost as guest; the connection closes when t ends.
func Dial(t testing.TB, vhost string) *amqp.Connection {
	t.Helper()
	conn, err := amqp.DialConfig(AMQPURL, amqp.Config{Vhost: vhost, Heartbeat: 10 * time.Second})
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable (make services): %v", AMQPURL, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Channel opens a channel that closes when t ends.
func Channel(t testing.TB, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

// Declare declares a durable queue.
func Declare(t testing.TB, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
}

// Depth is the queue's ready count straight from the broker (no
// statistics lag), once it has settled: two reads settleGap apart agree.
// A classic queue answers a depth query ahead of the casts waiting in its
// mailbox, a requeue among them, so one read just after a client gave
// its deliveries back can miss them (the broker prioritises the query).
// Polls for a moment while messages move use DepthNow.
func Depth(t testing.TB, ch *amqp.Channel, name string) int {
	t.Helper()
	return Settled(func() int { return DepthNow(t, ch, name) })
}

// Settled reads a count until two reads settleGap apart agree (for 2 s
// at most, then the last read).
func Settled(read func() int) int {
	last := read()
	for range 40 {
		time.Sleep(settleGap)
		got := read()
		if got == last {
			return got
		}
		last = got
	}
	return last
}

// settleGap is the pause between the reads of a settled count.
const settleGap = 50 * time.Millisecond

// DepthNow is one read of the queue's ready count: what the queue
// process answers now, possibly ahead of requeues it has yet to handle.
func DepthNow(t testing.TB, ch *amqp.Channel, name string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect %s: %v", name, err)
	}
	return q.Messages
}

// WaitDepth polls until name holds want ready messages, for as long as
// the depth keeps moving.
func WaitDepth(t testing.TB, ch *amqp.Channel, name string, want int) {
	t.Helper()
	// The broker may take minutes over a large queue (dead-lettering
	// 200 000 expired messages): wait while the depth moves, and fail
	// once it has stood still for 10 s, or after 5 minutes in all.
	start, last := time.Now(), -1
	var still time.Time
	for {
		got := DepthNow(t, ch, name)
		if got == want {
			return
		}
		if got != last {
			last, still = got, time.Now()
		}
		if time.Since(still) > 10*time.Second || time.Since(start) > 5*time.Minute {
			t.Fatalf("queue %s holds %d messages, want %d", name, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Hold has a consumer on ch take n messages of queue unacknowledged, as
// another client holding them would, and returns its consumer tag: the
// caller may cancel it and keep the deliveries, as a browse does.
func Hold(t testing.TB, ch *amqp.Channel, queue string, n int) string {
	t.Helper()
	const tag = "holder"
	deliveries, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	for i := range n {
		select {
		case <-deliveries:
		case <-time.After(10 * time.Second):
			t.Fatalf("the holder got %d of %d messages of %s", i, n, queue)
		}
	}
	return tag
}

// WaitUnacked polls the management API until it counts want messages of
// vhost/name delivered and unacknowledged: its figures follow the broker
// by up to a statistics interval (5 s by default).
func WaitUnacked(t testing.TB, vhost, name string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct {
			Unacked *int `json:"messages_unacknowledged"`
		}
		raw := Mgmt(t, http.MethodGet, "/api/queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name), nil)
		if err := json.Unmarshal(raw, &q); err != nil {
			t.Fatalf("queue %s: %v", name, err)
		}
		if q.Unacked != nil && *q.Unacked == want {
			return
		}
		if time.Now().After(deadline) {
			got := "none"
			if q.Unacked != nil {
				got = fmt.Sprint(*q.Unacked)
			}
			t.Fatalf("the management API counts %s unacknowledged messages of %s after 30 s, want %d", got, name, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// DeadLetter has the broker itself dead-letter msgs from origin into dlq:
// each is published to origin, taken and rejected without requeue, so
// origin must dead-letter into dlq. It returns once dlq holds them all.
func DeadLetter(t testing.TB, ch *amqp.Channel, origin, dlq string, msgs []amqp.Publishing) {
	t.Helper()
	before, waiting := Depth(t, ch, dlq), Depth(t, ch, origin)
	for _, m := range msgs {
		if err := ch.Publish("", origin, false, false, m); err != nil {
			t.Fatalf("publish to %s: %v", origin, err)
		}
	}
	WaitDepth(t, ch, origin, waiting+len(msgs))
	for range msgs {
		d, ok, err := ch.Get(origin, false)
		if err != nil || !ok {
			t.Fatalf("get from %s: %v", origin, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	WaitDepth(t, ch, dlq, before+len(msgs))
}
