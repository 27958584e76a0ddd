//go:build integration

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/testkit"
)

// warren channels --json against the broker: a publisher in confirm mode
// and a consumer's channel on one named connection.
func TestChannelsJSONListsTheBrokersChannels(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	vhost := testkit.Vhost(t, "warren-cli-channels")
	name := "warren-cli-test-" + vhost
	conn, err := amqp.DialConfig(testkit.AMQPURL, amqp.Config{Vhost: vhost, Properties: amqp.Table{"connection_name": name}})
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable (make services): %v", testkit.AMQPURL, err)
	}
	t.Cleanup(func() { conn.Close() })
	pub := testkit.Channel(t, conn)
	testkit.Declare(t, pub, "orders", nil)
	if err := pub.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		dc, err := pub.PublishWithDeferredConfirmWithContext(context.Background(), "", "orders", false, false, amqp.Publishing{Body: []byte("o")})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(context.Background()); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
	cons := testkit.Channel(t, conn)
	if err := cons.Qos(7, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Consume("orders", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	config := writeStatusConfig(t, testkit.MgmtURL, vhost)
	testEnv(statusPasswordEnv, "guest")

	type channel struct {
		Connection  string   `json:"connection"`
		User        string   `json:"user"`
		Vhost       string   `json:"vhost"`
		Confirm     *bool    `json:"confirm"`
		Unconfirmed *int64   `json:"unconfirmed"`
		Prefetch    *int64   `json:"prefetch"`
		Unacked     *int64   `json:"unacked"`
		PublishRate *float64 `json:"publish_rate"`
	}
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The broker's channel figures change once per statistics interval.
		out, err := runCmd(t, config, newChannelsCmd, "--json")
		if err != nil {
			t.Fatalf("channels --json: %v", err)
		}
		var got struct {
			Channels         []channel `json:"channels"`
			UnconfirmedTotal *int64    `json:"unconfirmed_total"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var publisher, consumer *channel
		for i, c := range got.Channels {
			if c.Connection != name || c.User != "guest" || c.Vhost != vhost || c.Confirm == nil {
				continue
			}
			if *c.Confirm {
				publisher = &got.Channels[i]
			} else {
				consumer = &got.Channels[i]
			}
		}
		if publisher != nil && consumer != nil && publisher.Unconfirmed != nil && *publisher.Unconfirmed == 0 &&
			consumer.Prefetch != nil && *consumer.Prefetch == 7 && consumer.Unacked != nil && *consumer.Unacked == 7 &&
			got.UnconfirmedTotal != nil && *got.UnconfirmedTotal == 0 {
			return
		}
		last = fmt.Sprintf("publisher %+v consumer %+v in %s", publisher, consumer, out)
		if time.Now().After(deadline) {
			t.Fatalf("channels --json never showed the confirm-mode publisher with nothing pending and the consumer holding its prefetch of 7: %s", last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
