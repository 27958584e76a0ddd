package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// canary measures the two guards of a staged replay (docs/BENCHMARKS.md):
// a replay of 20 000 with --canary 10 into a consumer that rejects every
// message must let at most the canary and one stage die again (110) and
// end halted; a replay of 5 000 with --rate auto into a consumer that
// acks 200 a second must keep the destination's depth within 3 seconds
// of that rate above where it started, and take within 20% of 25 s.
func (b *bench) canary() ([]row, error) {
	halt, err := b.canaryHalt(20_000)
	if err != nil {
		return nil, err
	}
	pace, err := b.paced(5_000, 200)
	if err != nil {
		return append(halt, pace...), err
	}
	return append(halt, pace...), nil
}

// stagedScene is a vhost where orders dead-letters through orders.dlx
// into orders.dlq, which holds n rejected messages, and warren's config
// for it.
func (b *bench) stagedScene(ctx context.Context, name string, n int) (string, *amqp.Connection, func(), error) {
	vh, conn, release, err := b.openVhost(name)
	if err != nil {
		return "", nil, nil, err
	}
	fail := func(err error) (string, *amqp.Connection, func(), error) {
		release()
		return "", nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return fail(err)
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare("orders.dlx", "direct", true, false, false, false, nil); err != nil {
		return fail(err)
	}
	err = declareAll(conn, "", []declaration{
		{name: "orders.dlq"},
		{name: "orders", args: amqp.Table{"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders"}},
	})
	if err != nil {
		return fail(err)
	}
	if err := ch.QueueBind("orders.dlq", "orders", "orders.dlx", false, nil); err != nil {
		return fail(err)
	}
	if err := fillByReject(ctx, conn, "orders", "orders.dlq", n, 0); err != nil {
		return fail(err)
	}
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return fail(err)
	}
	return cfg, conn, release, nil
}

// consumeOrders takes from orders until ctx ends: every is the time
// between two deliveries (0: as fast as they come), reject whether it
// rejects (the broker dead-letters the message back) instead of acking.
func consumeOrders(ctx context.Context, conn *amqp.Connection, every time.Duration, reject bool) (*atomic.Int64, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(50, 0, false); err != nil {
		return nil, err
	}
	deliveries, err := ch.Consume("orders", "bench-consumer", false, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	var n atomic.Int64
	go func() {
		defer ch.Close()
		var tick <-chan time.Time
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for {
			if tick != nil {
				select {
				case <-tick:
				case <-ctx.Done():
					return
				}
			}
			select {
			case d, ok := <-deliveries:
				if !ok {
					return
				}
				if reject {
					_ = d.Nack(false, false)
				} else {
					_ = d.Ack(false)
				}
				n.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()
	return &n, nil
}

// stagedJSON is what a staged replay's --json says.
type stagedJSON struct {
	Confirmed int  `json:"confirmed"`
	Halted    bool `json:"halted"`
}

func (b *bench) stagedReplay(ctx context.Context, cfg string, args ...string) (stagedJSON, time.Duration, error) {
	b.logf("warren %v", args)
	cmd := b.warrenCmd(ctx, cfg, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var res stagedJSON
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 4) {
		return res, took, fmt.Errorf("warren %v: %w: %s", args, err, stderr.Bytes())
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		return res, took, fmt.Errorf("warren %v --json: %w: %s", args, jerr, stderr.Bytes())
	}
	return res, took, nil
}

func (b *bench) canaryHalt(n int) ([]row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg, conn, release, err := b.stagedScene(ctx, "canary", n)
	if err != nil {
		return nil, err
	}
	defer release()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	died, err := consumeOrders(cctx, conn, 0, true)
	if err != nil {
		return nil, err
	}
	res, _, err := b.stagedReplay(ctx, cfg, "dlq", "replay", "orders.dlq", "--canary", "10", "--canary-wait", "10s", "--yes", "--json")
	if err != nil {
		return nil, err
	}
	if err := waitDepth(conn, "orders.dlq", n, time.Minute); err != nil {
		return nil, fmt.Errorf("after the halted replay: %w", err)
	}
	stop()
	if !res.Halted {
		return nil, fmt.Errorf("the replay into a consumer that rejects everything did not halt: %+v", res)
	}
	return []row{absolute(fmt.Sprintf("copies that died again, replay of %d into a consumer that rejects all, --canary 10 (ends halted, %d back in the DLQ)", n, n),
		float64(died.Load()), fmtCount, fmt.Sprintf("no canary: %d", n), cmp{"<=", 110})}, nil
}

func (b *bench) paced(n, perSec int) ([]row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg, conn, release, err := b.stagedScene(ctx, "paced", n)
	if err != nil {
		return nil, err
	}
	defer release()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	acked, err := consumeOrders(cctx, conn, time.Second/time.Duration(perSec), false)
	if err != nil {
		return nil, err
	}
	// The destination's ready depth, every 50 ms, while the run lasts.
	var peak atomic.Int64
	watch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for cctx.Err() == nil {
			q, err := watch.QueueDeclarePassive("orders", true, false, false, false, nil)
			if err != nil {
				return
			}
			if int64(q.Messages) > peak.Load() {
				peak.Store(int64(q.Messages))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	res, took, err := b.stagedReplay(ctx, cfg, "dlq", "replay", "orders.dlq", "--rate", "auto", "--yes", "--json")
	stop()
	<-watched
	if err != nil {
		return nil, err
	}
	if res.Confirmed != n {
		return nil, fmt.Errorf("--rate auto replayed %d of %d", res.Confirmed, n)
	}
	ideal := time.Duration(n/perSec) * time.Second
	b.logf("paced: %d acked during the run, peak depth %d, took %s", acked.Load(), peak.Load(), took)
	return []row{
		absolute(fmt.Sprintf("destination depth peak above its start, %d with --rate auto into a consumer acking %d/s", n, perSec),
			float64(peak.Load()), fmtCount, fmt.Sprintf("3 s of its rate: %d", 3*perSec), cmp{"<=", float64(3 * perSec)}),
		versus(fmt.Sprintf("run time, %d with --rate auto into a consumer acking %d/s (anchor: %d ÷ %d/s)", n, perSec, n, perSec),
			took.Seconds(), ideal.Seconds(), fmtSeconds, &cmp{"<=", 1.2}),
	}, nil
}

func fmtCount(n float64) string { return fmt.Sprintf("%.0f", n) }

func fmtSeconds(s float64) string { return fmt.Sprintf("%.1f s", s) }
