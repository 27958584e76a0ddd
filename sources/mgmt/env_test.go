//go:build integration

package mgmt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// The integration tests run against the broker testkit names (3.10 or
// 4.3, WARREN_TEST_BROKER); a missing broker fails them.
var (
	testAMQP = testkit.AMQPURL
	testMgmt = testkit.MgmtURL
)

func testClient(t testing.TB) *Client {
	t.Helper()
	// The first page's tests read the management API's page; those of
	// the metrics' page name the endpoint (metrics_test.go).
	c, err := New(Options{URL: testMgmt, MetricsURL: MetricsOff, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// env is one test's own vhost with an AMQP connection to it.
type env struct {
	t     testing.TB
	c     *Client
	vhost string
	conn  *amqp.Connection
}

func newEnv(t testing.TB) *env {
	t.Helper()
	testkit.CheckVersion(t)
	c := testClient(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	vhost := "warren-mgmt-" + hex.EncodeToString(b[:])
	admin := c.Admin()
	res, err := admin.PutVhost(vhost, rabbithole.VhostSettings{})
	if err != nil {
		t.Fatalf("create vhost %s: %v (RabbitMQ with the management plugin must run at %s)", vhost, err, testMgmt)
	}
	res.Body.Close()
	t.Cleanup(func() {
		if res, err := admin.DeleteVhost(vhost); err == nil {
			res.Body.Close()
		}
	})
	res, err = admin.UpdatePermissionsIn(vhost, "guest", rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	if err != nil {
		t.Fatalf("grant guest on %s: %v", vhost, err)
	}
	res.Body.Close()
	conn, err := amqp.Dial(testAMQP + url.PathEscape(vhost))
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable: %v", testAMQP, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &env{t: t, c: c, vhost: vhost, conn: conn}
}

func (e *env) channel() *amqp.Channel {
	e.t.Helper()
	ch, err := e.conn.Channel()
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ch.Close() })
	return ch
}

func (e *env) queue(name string, args amqp.Table) {
	e.t.Helper()
	ch := e.channel()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		e.t.Fatalf("declare %s: %v", name, err)
	}
}

func (e *env) exchange(name, kind string) {
	e.t.Helper()
	if err := e.channel().ExchangeDeclare(name, kind, true, false, false, false, nil); err != nil {
		e.t.Fatalf("declare exchange %s: %v", name, err)
	}
}

func (e *env) bind(queue, key, exchange string) {
	e.t.Helper()
	if err := e.channel().QueueBind(queue, key, exchange, false, nil); err != nil {
		e.t.Fatalf("bind %s to %s: %v", queue, exchange, err)
	}
}

func (e *env) policy(name, pattern string, def map[string]any) {
	e.t.Helper()
	res, err := e.c.Admin().PutPolicy(e.vhost, name, rabbithole.Policy{Pattern: pattern, ApplyTo: "queues",
		Definition: rabbithole.PolicyDefinition(def)})
	if err != nil {
		e.t.Fatalf("policy %s: %v", name, err)
	}
	res.Body.Close()
}

// queuesHolding declares a queue per name holding that many messages.
func (e *env) queuesHolding(depths map[string]int) {
	e.t.Helper()
	for name, n := range depths {
		e.queue(name, nil)
		e.publish(name, n, nil)
	}
}

// publish sends n messages to the default exchange with confirms.
func (e *env) publish(queue string, n int, msg func(i int) amqp.Publishing) {
	e.t.Helper()
	ch := e.channel()
	if err := ch.Confirm(false); err != nil {
		e.t.Fatal(err)
	}
	var pending []*amqp.DeferredConfirmation
	for i := 0; i < n; i++ {
		p := amqp.Publishing{Body: []byte("m")}
		if msg != nil {
			p = msg(i)
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, p)
		if err != nil {
			e.t.Fatalf("publish to %s: %v", queue, err)
		}
		pending = append(pending, dc)
	}
	for _, dc := range pending {
		if ok, err := dc.WaitContext(context.Background()); err != nil || !ok {
			e.t.Fatalf("publish to %s not confirmed: %v", queue, err)
		}
	}
}

// snapshot polls Snapshot until ok accepts it, failing after 20 s (the
// management API's figures lag by the stats interval, 5 s by default).
func (e *env) snapshot(o domain.SnapshotOptions, ok func(*domain.Snapshot) bool) *domain.Snapshot {
	e.t.Helper()
	o.Vhost = e.vhost
	var last *domain.Snapshot
	waitFor(e.t, 20*time.Second, func() (bool, string) {
		s, err := e.c.Snapshot(context.Background(), o)
		if err != nil {
			e.t.Fatalf("snapshot: %v", err)
		}
		last = s
		return ok(s), describe(s)
	})
	return last
}

func describe(s *domain.Snapshot) string {
	var b strings.Builder
	for _, q := range s.Queues {
		fmt.Fprintf(&b, "%s: %d/%d/%d λ=%.1f μ=%.1f; ", q.Name, q.Messages, q.Ready, q.Unacked, q.PublishRate, q.AckRate)
	}
	fmt.Fprintf(&b, "channels %+v consumers %+v note %q", s.Channels, s.Consumers, s.ChannelsNote)
	return b.String()
}

// waitFor polls cond every 200 ms until it holds or the deadline passes.
func waitFor(t testing.TB, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var state string
	for {
		var ok bool
		if ok, state = cond(); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s; last state: %s", within, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
