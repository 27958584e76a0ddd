package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// replayRounds is how many times each mover runs; the fastest is kept,
// since the machine is shared and a slow run says more about the
// neighbours than about the mover.
const replayRounds = 2

// confirmWindow is the confirm window of the plain pipeline: warren's
// default (actions.DefaultWindow).
const confirmWindow = 2048

// replay measures `warren dlq replay` of n rejected messages back to the
// queue they died in, against a dynamic shovel moving the same kind of
// messages the same way (the management UI's "move messages", ack-mode
// on-confirm) and against a plain publisher with pipelined confirms
// sending copies of them (the ceiling: publishing alone, no reading, no
// acks). Beside them, a plain client move (plainMove) shows what any
// client that acks only confirmed copies reaches on this broker.
func (b *bench) replay(n int) ([]row, error) {
	const origin, dlq = "orders", "orders.dlq"
	vh, conn, release, err := b.openDLQScene(fmt.Sprintf("replay-%d", n), origin, dlq, declaration{name: "ceiling"})
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	refill := func(round int) error {
		b.logf("rejecting %d messages into %s", n, dlq)
		if err := purge(conn, origin); err != nil {
			return err
		}
		return fillByReject(ctx, conn, origin, dlq, n, round*n)
	}
	never := time.Duration(1<<63 - 1)
	warren, shovel, ceiling, client := never, never, never, never
	// What the brokers' CPU did during each mover's fastest round.
	var warrenCPU, shovelCPU, clientCPU cpuUse
	var split *replayPhases
	var rss float64
	for round := range replayRounds {
		if err := refill(4 * round); err != nil {
			return nil, err
		}
		sample, err := sampleLetter(conn, dlq)
		if err != nil {
			return nil, err
		}
		b.logf("warren dlq replay of %d", n)
		c0 := sampleCPU()
		took, peak, err := b.replayCommand(ctx, cfg, dlq, n)
		if err != nil {
			return nil, err
		}
		if took < warren {
			warrenCPU = c0.until(sampleCPU())
		}
		rss = max(rss, peak)
		if err := moved(conn, origin, dlq, n); err != nil {
			return nil, fmt.Errorf("after warren's replay: %w", err)
		}
		warren = min(warren, took)

		if err := refill(4*round + 1); err != nil {
			return nil, err
		}
		b.logf("shovel move of %d", n)
		c0 = sampleCPU()
		if took, err = b.shovel(conn, vh, dlq, origin, n); err != nil {
			return nil, err
		}
		if took < shovel {
			shovelCPU = c0.until(sampleCPU())
		}
		shovel = min(shovel, took)
		if err := purge(conn, origin); err != nil {
			return nil, err
		}

		b.logf("plain confirm pipeline of %d", n)
		if err := purge(conn, "ceiling"); err != nil {
			return nil, err
		}
		copyOf := func(int) amqp.Publishing { return sample }
		if took, err = publishConfirmed(ctx, conn, "", "ceiling", n, confirmWindow, true, copyOf); err != nil {
			return nil, err
		}
		ceiling = min(ceiling, took)

		if err := refill(4*round + 2); err != nil {
			return nil, err
		}
		b.logf("plain client move of %d", n)
		c0 = sampleCPU()
		if took, err = b.plainMove(ctx, conn, vh, dlq, origin, n); err != nil {
			return nil, err
		}
		if took < client {
			clientCPU = c0.until(sampleCPU())
		}
		if err := moved(conn, origin, dlq, n); err != nil {
			return nil, fmt.Errorf("after the plain client move: %w", err)
		}
		client = min(client, took)

		if err := refill(4*round + 3); err != nil {
			return nil, err
		}
		b.logf("replay phases of %d", n)
		ph, err := b.phases(ctx, conn, vh, dlq, n)
		if err != nil {
			return nil, err
		}
		if err := moved(conn, origin, dlq, n); err != nil {
			return nil, fmt.Errorf("after the phased replay: %w", err)
		}
		if split == nil || ph.preview+ph.stream < split.preview+split.stream {
			split = ph
		}
	}
	label := thousands(n) + " dead letters"
	return []row{
		versus("replay rate vs shovel move, "+label, rate(n, warren), rate(n, shovel), fmtRate, &cmp{">=", 1.0}),
		versus("replay rate vs minimal loop (consume, publish, multiple ack at the confirmed boundary), "+label, rate(n, warren), rate(n, client), fmtRate, &cmp{">=", 0.9}),
		absolute("replay resident memory, "+label, rss, fmtMiB, "", cmp{"<", 150}),
		versus("  replay rate vs plain confirm pipeline, "+label, rate(n, warren), rate(n, ceiling), fmtRate, nil),
		versus("  plain client move vs shovel move, "+label, rate(n, client), rate(n, shovel), fmtRate, nil),
		versus("  phase: preview (read and decide every message), "+label, rate(n, split.preview), rate(n, shovel), fmtRate, nil),
		versus("  phase: stream (decide, record, publish, confirm, ack), "+label, rate(n, split.stream), rate(n, shovel), fmtRate, nil),
		info("  brokers' CPU: warren / minimal loop / shovel, "+label,
			fmt.Sprintf("%s; %s", warrenCPU, clientCPU), shovelCPU.String()),
		versus("  brokers' CPU time per message: minimal loop vs shovel, "+label,
			float64(clientCPU.perMessage(rate(n, client)).Microseconds()), float64(shovelCPU.perMessage(rate(n, shovel)).Microseconds()), fmtMicros, nil),
	}, nil
}

// plainMove times plainMove on a publishing connection of its own, as
// warren publishes.
func (b *bench) plainMove(ctx context.Context, conn *amqp.Connection, vh, src, dest string, n int) (time.Duration, error) {
	pubConn, err := b.dial(vh)
	if err != nil {
		return 0, err
	}
	defer pubConn.Close()
	return plainMove(ctx, conn, pubConn, src, dest, n, confirmWindow)
}

// replayCommand runs `warren dlq replay QUEUE --yes --json --limit n`,
// preview and stream together as the operator waits for them, and
// returns its wall time and peak resident memory.
func (b *bench) replayCommand(ctx context.Context, cfg, queue string, n int) (time.Duration, float64, error) {
	cmd := b.warrenCmd(ctx, cfg, "dlq", "replay", queue, "--yes", "--json", "--limit", strconv.Itoa(n))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	peak := watchHWM(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("warren dlq replay: %w: %s", err, stderr.Bytes())
	}
	took := time.Since(start)
	rss := <-peak
	var res struct {
		Confirmed int `json:"confirmed"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return 0, 0, fmt.Errorf("warren dlq replay --json: %w", err)
	}
	if res.Confirmed != n {
		return 0, 0, fmt.Errorf("warren replayed %d of %d: %s", res.Confirmed, n, stderr.Bytes())
	}
	return took, rss, nil
}

// shovel moves src to dest with a dynamic shovel as the management UI's
// "move messages" does, timed from its creation until dest holds every
// message and src none, the shovel's last ack included (it then removes
// itself). dest keeps the messages.
func (b *bench) shovel(conn *amqp.Connection, vh, src, dest string, n int) (time.Duration, error) {
	uri := "amqp:///" + url.PathEscape(vh)
	// A name of its own per round: the previous round's shovel may still
	// be removing itself, and a PUT on its name would edit it instead of
	// starting a new one.
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	path := "/api/parameters/shovel/" + url.PathEscape(vh) + "/bench-move-" + hex.EncodeToString(rnd[:])
	def := map[string]any{"value": map[string]any{
		"src-protocol": "amqp091", "src-uri": uri, "src-queue": src,
		"dest-protocol": "amqp091", "dest-uri": uri, "dest-queue": dest,
		"ack-mode": "on-confirm", "src-delete-after": "queue-length",
	}}
	start := time.Now()
	if _, err := b.mgmt(http.MethodPut, path, def, nil); err != nil {
		return 0, fmt.Errorf("create the shovel (is rabbitmq_shovel enabled?): %w", err)
	}
	err := waitDepth(conn, dest, n, 5*time.Minute)
	if err == nil {
		err = waitDrained(conn, src, time.Minute)
	}
	took := time.Since(start)
	if err != nil {
		// A shovel that did not finish is removed; one that did has
		// removed itself.
		_, _ = b.mgmt(http.MethodDelete, path, nil, nil)
		return 0, fmt.Errorf("shovel: %w", err)
	}
	return took, nil
}

// waitDrained polls until queue has no ready message and no consumer:
// the shovel has acked its last delivery and removed itself. Until then
// messages it holds unacknowledged would go back to the queue if it were
// stopped.
func waitDrained(conn *amqp.Connection, queue string, timeout time.Duration) error {
	return pollQueue(conn, queue, timeout, func(q amqp.Queue) error {
		if q.Messages == 0 && q.Consumers == 0 {
			return nil
		}
		return fmt.Errorf("queue %s still holds %d messages and %d consumers after %s", queue, q.Messages, q.Consumers, timeout)
	})
}

// moved checks that the origin holds the n replayed messages and the DLQ
// none, then empties the origin for the next round.
func moved(conn *amqp.Connection, origin, dlq string, n int) error {
	if err := waitDepth(conn, origin, n, time.Minute); err != nil {
		return err
	}
	if err := waitDepth(conn, dlq, 0, time.Minute); err != nil {
		return err
	}
	return purge(conn, origin)
}

// sampleLetter reads one dead letter (and gives it back) to give the
// plain pipeline messages of the same size, properties and headers.
func sampleLetter(conn *amqp.Connection, queue string) (amqp.Publishing, error) {
	ch, err := conn.Channel()
	if err != nil {
		return amqp.Publishing{}, err
	}
	defer ch.Close()
	d, ok, err := ch.Get(queue, false)
	if err != nil {
		return amqp.Publishing{}, err
	}
	if !ok {
		return amqp.Publishing{}, errors.New("no dead letter to sample")
	}
	if err := d.Nack(false, true); err != nil {
		return amqp.Publishing{}, err
	}
	return amqp.Publishing{
		Headers: d.Headers, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Body: d.Body,
	}, nil
}

func purge(conn *amqp.Connection, queue string) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	_, err = ch.QueuePurge(queue, false)
	return err
}
