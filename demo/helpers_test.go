//go:build integration

package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/testkit"
)

// The services under test (WARREN_TEST_BROKER picks 3.10 or 4.3).
var (
	testAMQPURL = testkit.AMQPURL
	testMgmtURL = testkit.MgmtURL
	testPGDSN   = testkit.PGDSN
)

// No keep-alive, so no idle connection goroutine survives a request and
// the goroutine count in the Run test is not disturbed.
var testHTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// testOptions points the demo at a vhost of its own, deleted at cleanup.
func testOptions(t *testing.T) Options {
	t.Helper()
	vhost := fmt.Sprintf("warren-demo-test-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), time.Now().UnixNano())
	t.Cleanup(func() {
		req, err := http.NewRequest(http.MethodDelete, testMgmtURL+"/api/vhosts/"+url.PathEscape(vhost), nil)
		if err != nil {
			t.Errorf("delete vhost %s: %v", vhost, err)
			return
		}
		req.SetBasicAuth("guest", "guest")
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Errorf("delete vhost %s: %v", vhost, err)
			return
		}
		resp.Body.Close()
	})
	return Options{
		AMQPURL:       testAMQPURL,
		ManagementURL: testMgmtURL,
		Username:      "guest",
		Password:      "guest",
		Vhost:         vhost,
		Log:           &testLog{t: t},
	}
}

// testLog forwards the demo's log lines to the test log and keeps them.
type testLog struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(string(p)))
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (l *testLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func seed(t *testing.T, o Options) *Scene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	s, err := Seed(ctx, o)
	if err != nil {
		t.Fatalf("Seed into vhost %s: %v (is RabbitMQ with the management plugin running on 127.0.0.1?)", o.Vhost, err)
	}
	t.Logf("seeded vhost %s in %v", o.Vhost, time.Since(start).Round(time.Millisecond))
	return s
}

func dialVhost(t *testing.T, vhost string) *amqp.Connection {
	t.Helper()
	conn, err := amqp.DialConfig(testAMQPURL, amqp.Config{Vhost: vhost})
	if err != nil {
		t.Fatalf("dial vhost %s: %v", vhost, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// browse takes every message of a DLQ on one channel with manual acks,
// hands them to inspect, then returns each one with basic.nack(requeue),
// one delivery at a time, as warren's browse session does.
func browse(t *testing.T, conn *amqp.Connection, queue string, want int, inspect func([]amqp.Delivery)) {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	defer ch.Close()
	if err := ch.Qos(want+50, 0, false); err != nil {
		t.Fatalf("qos: %v", err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	var held []amqp.Delivery
	deadline := time.After(10 * time.Second)
	for len(held) < want {
		select {
		case d := <-deliveries:
			held = append(held, d)
		case <-deadline:
			t.Fatalf("%s: got %d deliveries, want %d", queue, len(held), want)
		}
	}
	if n := mustDepth(t, conn, queue); n != 0 {
		t.Errorf("%s: %d messages beyond the expected %d", queue, n, want)
	}
	inspect(held)
	for _, d := range held {
		if err := d.Nack(false, true); err != nil {
			t.Fatalf("nack on %s: %v", queue, err)
		}
	}
}

func mustDepth(t *testing.T, conn *amqp.Connection, queue string) int {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	defer ch.Close()
	n, err := depth(ch, queue)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func getJSON(t *testing.T, path string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, testMgmtURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := testHTTP.Do(req)
	if err != nil {
		t.Fatalf("management API GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("management API GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// eventually polls cond every 200 ms until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.After(within)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%s: not within %v (last: %s)", what, within, state)
		case <-tick.C:
		}
	}
}
