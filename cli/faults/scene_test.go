//go:build faults

package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	// messages is the size of the DLQ every run replays.
	messages = 5000
	// The scene's queues: the consumer queue the dead letters came from
	// (and go back to), its DLQ, the DLQ's parking queue, and an exchange
	// bound to the consumer queue for replays with --to.
	workQueue    = "work"
	dlqQueue     = "work.dlq"
	parkingQueue = "work.dlq.quarantine"
	workExchange = "faults.x"
	idHeader     = "event_id"
	// harnessName tells the test's own connections from warren's.
	harnessName = "faults harness"
)

// scene is a vhost of its own on broker b holding the queues above.
type scene struct {
	b     *broker
	vhost string
}

func newScene(t *testing.T, b *broker, name string) *scene {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	s := &scene{b: b, vhost: "warren-faults-" + name + "-" + hex.EncodeToString(rnd[:])}
	b.mgmt(t, http.MethodPut, "/api/vhosts/"+url.PathEscape(s.vhost), "")
	t.Cleanup(func() { b.mgmt(t, http.MethodDelete, "/api/vhosts/"+url.PathEscape(s.vhost), "") })
	b.mgmt(t, http.MethodPut, "/api/permissions/"+url.PathEscape(s.vhost)+"/guest", `{"configure":".*","write":".*","read":".*"}`)
	// On the cluster the queues are declared through the second node:
	// a quorum queue's leader is placed on the declaring node, so the
	// leaders are away from the node warren talks to.
	conn := s.dialPort(t, b.amqpPort)
	if b.quorum {
		conn = s.dialPort(t, b.nodes[1].amqpPort)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// Durable queues and persistent messages, so a broker restart keeps
	// everything that was confirmed.
	for _, q := range []struct {
		name string
		args amqp.Table
	}{
		{dlqQueue, amqp.Table{}},
		{parkingQueue, amqp.Table{}},
		{workQueue, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlqQueue}},
	} {
		if b.quorum {
			q.args["x-queue-type"] = "quorum"
			if q.name != workQueue {
				// As a quorum DLQ on 4.3 must be: work's dead letters
				// carry the delivery count they reached there (up to
				// its default limit of 20, plus one), so a DLQ with the
				// same default limit would drop them once returned,
				// and warren refuses to browse it.
				q.args["x-delivery-limit"] = int32(-1)
			}
		}
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatalf("declare %s: %v", q.name, err)
		}
	}
	if err := ch.ExchangeDeclare(workExchange, amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	s.bind(t)
	return s
}

func (s *scene) dial(t *testing.T) *amqp.Connection {
	t.Helper()
	return s.dialPort(t, s.b.amqpPort)
}

func (s *scene) dialPort(t *testing.T, port int) *amqp.Connection {
	t.Helper()
	addr := fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", port)
	conn, err := amqp.DialConfig(addr, amqp.Config{Vhost: s.vhost, Properties: amqp.Table{"connection_name": harnessName}})
	if err != nil {
		t.Fatalf("RabbitMQ %s at 127.0.0.1:%d unreachable (vhost %s; make services services-cluster): %v", s.b.name, port, s.vhost, err)
	}
	return conn
}

func (s *scene) channel(t *testing.T, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// bind routes workExchange/work to the work queue. On a 4.3 cluster
// whose metadata leader moved (a node was stopped and started by the
// test before), the node's own view of an exchange it just declared can
// lag for a moment: a bind that finds no exchange is tried again, on a
// new channel, for a few seconds.
func (s *scene) bind(t *testing.T) {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := s.channel(t, conn).QueueBind(workQueue, workQueue, workExchange, false, nil)
		var ae *amqp.Error
		switch {
		case err == nil:
			return
		case errors.As(err, &ae) && ae.Code == amqp.NotFound && time.Now().Before(deadline):
			continue
		}
		t.Fatal(err)
	}
}

func (s *scene) unbind(t *testing.T) {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	if err := s.channel(t, conn).QueueUnbind(workQueue, workQueue, workExchange, nil); err != nil {
		t.Fatal(err)
	}
}

func logicalID(i int) string { return fmt.Sprintf("ev-%05d", i) }

// fill empties the scene's queues and makes a fresh DLQ of messages dead
// letters, dead-lettered by the broker: each is published to the work
// queue and rejected there without requeue.
func (s *scene) fill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := s.dial(t)
	defer conn.Close()
	ch := s.channel(t, conn)
	for _, q := range []string{workQueue, dlqQueue, parkingQueue} {
		if _, err := ch.QueuePurge(q, false); err != nil {
			t.Fatalf("purge %s: %v", q, err)
		}
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := make([]*amqp.DeferredConfirmation, 0, messages)
	now := time.Now()
	for i := range messages {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", workQueue, false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("m-%05d", i), DeliveryMode: amqp.Persistent, ContentType: "application/json",
			Timestamp: now, Headers: amqp.Table{idHeader: logicalID(i)},
			Body: []byte(fmt.Sprintf(`{"event_id":%q,"n":%d}`, logicalID(i), i)),
		})
		if err != nil {
			t.Fatal(err)
		}
		confirms = append(confirms, dc)
	}
	for _, dc := range confirms {
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			t.Fatalf("publish to %s not confirmed: %v", workQueue, err)
		}
	}
	rejecter := s.channel(t, conn)
	if err := rejecter.Qos(1000, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := rejecter.Consume(workQueue, "rejecter", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range messages {
		select {
		case d := <-deliveries:
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("timed out rejecting messages into the DLQ")
		}
	}
	if err := rejecter.Cancel("rejecter", false); err != nil {
		t.Fatal(err)
	}
	s.waitDepth(t, dlqQueue, messages)
}

// depth is a queue's ready count and consumers, straight from the broker
// (a passive declare has no statistics lag).
func depth(ch *amqp.Channel, queue string) (amqp.Queue, error) {
	return ch.QueueDeclarePassive(queue, true, false, false, false, nil)
}

func (s *scene) waitDepth(t *testing.T, queue string, want int) {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	ch := s.channel(t, conn)
	deadline := time.Now().Add(30 * time.Second)
	for {
		q, err := depth(ch, queue)
		if err != nil {
			t.Fatalf("inspect %s: %v", queue, err)
		}
		if q.Messages == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", queue, q.Messages, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until nothing of the replay is left in flight: no warren
// connection in the vhost, no consumer on the scene's queues, and the
// same total in them over several polls.
func (s *scene) settle(t *testing.T) {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	ch := s.channel(t, conn)
	deadline := time.Now().Add(60 * time.Second)
	last, stable := -1, 0
	for stable < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the scene did not settle within a minute (last total %d)", last)
		}
		time.Sleep(100 * time.Millisecond)
		total, busy := 0, s.warrenConnected(t)
		for _, q := range []string{dlqQueue, workQueue, parkingQueue} {
			info, err := depth(ch, q)
			if err != nil {
				t.Fatalf("inspect %s: %v", q, err)
			}
			total += info.Messages
			busy = busy || info.Consumers > 0
		}
		if busy || total != last {
			last, stable = total, 0
			continue
		}
		stable++
	}
}

// warrenConnected reports whether a connection other than the harness's
// is still open in the vhost.
func (s *scene) warrenConnected(t *testing.T) bool {
	t.Helper()
	var conns []struct {
		ClientProperties map[string]any `json:"client_properties"`
	}
	body := s.b.mgmt(t, http.MethodGet, "/api/vhosts/"+url.PathEscape(s.vhost)+"/connections?columns=client_properties", "")
	if err := json.Unmarshal([]byte(body), &conns); err != nil {
		t.Fatalf("connections of %s: %v", s.vhost, err)
	}
	for _, c := range conns {
		if c.ClientProperties["connection_name"] != harnessName {
			return true
		}
	}
	return false
}

// drain consumes everything in queue and returns the logical ID of each
// message, repeats included.
func (s *scene) drain(t *testing.T, queue string) []string {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	ch := s.channel(t, conn)
	info, err := depth(ch, queue)
	if err != nil {
		t.Fatalf("inspect %s: %v", queue, err)
	}
	ids := make([]string, 0, info.Messages)
	if info.Messages == 0 {
		return ids
	}
	deliveries, err := ch.Consume(queue, "counter", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for len(ids) < info.Messages {
		select {
		case d := <-deliveries:
			id, ok := d.Headers[idHeader].(string)
			if !ok {
				id = "no-id:" + d.MessageId
			}
			ids = append(ids, id)
		case <-timeout.C:
			t.Fatalf("%s: read %d of %d messages", queue, len(ids), info.Messages)
		}
	}
	return ids
}

func (b *broker) mgmt(t *testing.T, method, path, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, b.mgmtURL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("management API of RabbitMQ %s at %s unreachable (make services services-cluster): %v", b.name, b.mgmtURL(), err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		t.Fatalf("%s %s: %s %s", method, path, resp.Status, out)
	}
	return string(out)
}
