package live

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/sources/mgmt"
)

const (
	testAMQP = "amqp://127.0.0.1:5672/"
	testMgmt = "http://127.0.0.1:15672"
)

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// testVhost creates a vhost of its own for t, grants guest on it and
// deletes it, with everything in it, when t ends.
func testVhost(t *testing.T) string {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "warren-live-" + strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
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

func mgmtCall(t *testing.T, method, path string, body any) []byte {
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

func dial(vhost string) (*amqp.Connection, error) {
	return broker.Dial(broker.Options{URL: testAMQP, Username: "guest", Password: "guest", Vhost: vhost, Name: "warren live test"})
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

func testChannel(t *testing.T, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

func declare(t *testing.T, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
}

// waitDepth polls until name holds want ready messages.
func waitDepth(t *testing.T, ch *amqp.Channel, name string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("inspect %s: %v", name, err)
		}
		if q.Messages == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s holds %d ready messages, want %d", name, q.Messages, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rejectedScene makes orders dead-letter into orders.dlq and has the
// broker dead-letter n messages there by rejecting them.
func rejectedScene(t *testing.T, vhost string, n int) {
	t.Helper()
	ch := testChannel(t, testConn(t, vhost))
	declare(t, ch, "orders.dlq", nil)
	declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	for i := range n {
		id := "ev-" + string(rune('a'+i))
		err := ch.PublishWithContext(context.Background(), "", "orders", false, false, amqp.Publishing{
			MessageId: "m-" + id, ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitDepth(t, ch, "orders", n)
	for range n {
		d, ok, err := ch.Get("orders", false)
		if err != nil || !ok {
			t.Fatalf("get from orders: ok=%v err=%v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	waitDepth(t, ch, "orders.dlq", n)
}

func newLive(t *testing.T, c *config.Context) *Live {
	t.Helper()
	m, err := mgmt.New(mgmt.Options{URL: testMgmt, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := New(Services{
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
