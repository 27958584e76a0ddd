// Command watermill runs a Watermill router whose handler always fails, so
// that Watermill's poison-queue middleware writes its error messages into
// RabbitMQ the way it really does. warren's integration tests
// (sources/dlq/frameworks_broker_test.go) build it and run it against a
// vhost of their own, whose queues they have declared, and then read what
// Watermill wrote.
//
//	watermill -url AMQP_URL -vhost VHOST [-n N]
//
// It publishes N messages {"id": 5001+i} to the topic "payments" (with
// watermill-amqp's durable queue config the topic is the queue, reached
// through the default exchange), and consumes them with a handler that
// fails with "charge <id>: insufficient funds". The router's middleware
// is the usual pair: PoisonQueue (to the topic "payments_error") around
// Retry (two retries), so every message is handled three times before it
// is poisoned. It exits 0 once payments_error holds N messages and
// payments none, after printing one JSON line: the library versions and,
// per message UUID, how many times the handler ran; it exits 1 on an
// error or after -timeout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	topic       = "payments"
	poisonTopic = "payments_error"
)

func main() {
	base := flag.String("url", "amqp://guest:guest@127.0.0.1:5672/", "the broker, without a vhost")
	vhost := flag.String("vhost", "/", "the vhost, whose queues payments and payments_error exist")
	n := flag.Int("n", 5, "how many messages to publish")
	timeout := flag.Duration("timeout", 25*time.Second, "give up after this long")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("watermill: ")

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	runs, err := run(ctx, strings.TrimSuffix(*base, "/")+"/"+url.PathEscape(*vhost), *n)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(map[string]any{"watermill": version("github.com/ThreeDotsLabs/watermill"),
		"watermill-amqp": version("github.com/ThreeDotsLabs/watermill-amqp/v3"), "runs": runs})
	fmt.Println(string(out))
}

func run(ctx context.Context, uri string, n int) (map[string]int, error) {
	logger := watermill.NewStdLogger(false, false)
	cfg := wamqp.NewDurableQueueConfig(uri)
	publisher, err := wamqp.NewPublisher(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	defer publisher.Close()
	subscriber, err := wamqp.NewSubscriber(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("subscriber: %w", err)
	}
	defer subscriber.Close()

	for i := range n {
		msg := message.NewMessage(watermill.NewUUID(), fmt.Appendf(nil, `{"id":%d}`, 5001+i))
		if err := publisher.Publish(topic, msg); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}

	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return nil, err
	}
	poison, err := middleware.PoisonQueue(publisher, poisonTopic)
	if err != nil {
		return nil, err
	}
	retry := middleware.Retry{MaxRetries: 2, InitialInterval: 10 * time.Millisecond}
	router.AddMiddleware(poison, retry.Middleware)

	var mu sync.Mutex
	runs := map[string]int{}
	router.AddConsumerHandler("charge", topic, subscriber, func(msg *message.Message) error {
		mu.Lock()
		runs[msg.UUID]++
		mu.Unlock()
		var p struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal(msg.Payload, &p); err != nil {
			return err
		}
		return fmt.Errorf("charge %d: insufficient funds", p.ID)
	})

	routed := make(chan error, 1)
	go func() { routed <- router.Run(ctx) }()
	waitErr := waitDone(ctx, uri, n, routed)
	if err := router.Close(); err != nil && waitErr == nil {
		waitErr = err
	}
	mu.Lock()
	defer mu.Unlock()
	return runs, waitErr
}

// waitDone polls, on a connection of its own, until payments_error holds
// n messages and payments none.
func waitDone(ctx context.Context, uri string, n int, routed <-chan error) error {
	conn, err := amqp.Dial(uri)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	var poisoned, left int
	for {
		q, err := ch.QueueDeclarePassive(poisonTopic, true, false, false, false, nil)
		if err != nil {
			return err
		}
		p, err := ch.QueueDeclarePassive(topic, true, false, false, false, nil)
		if err != nil {
			return err
		}
		poisoned, left = q.Messages, p.Messages
		if poisoned == n && left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s holds %d messages and %s %d, want %d and 0: %w", poisonTopic, poisoned, topic, left, n, ctx.Err())
		case err := <-routed:
			return fmt.Errorf("the router stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// version is the version of module path this binary was built with.
func version(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
