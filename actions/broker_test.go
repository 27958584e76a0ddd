package actions

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

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
