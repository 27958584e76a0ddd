package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// bodies measures the resident memory of `warren dlq ls`, `warren dlq
// show` and `warren dlq stats` over a DLQ of six 16 MiB messages: a listing keeps no body, and
// a page asks the broker for no more bodies at once than the byte budget
// allows, so neither holds the 96 MiB the messages weigh together.
func (b *bench) bodies() ([]row, error) {
	const n, size = 6, 16 << 20
	vh, conn, release, err := b.openVhost("bodies")
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const queue = "big.dlq"
	if err := declareAll(conn, "", []declaration{{name: queue}}); err != nil {
		return nil, err
	}
	body := bytes.Repeat([]byte("x"), size)
	if _, err := publishConfirmed(ctx, conn, "", queue, n, n, false, func(i int) amqp.Publishing {
		return amqp.Publishing{DeliveryMode: amqp.Persistent, MessageId: fmt.Sprintf("big-%d", i), Body: body}
	}); err != nil {
		return nil, err
	}
	if err := waitDepth(conn, queue, n, time.Minute); err != nil {
		return nil, err
	}
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	// Each read gives every message back.
	peak := func(args ...string) (float64, error) {
		rss, err := b.peakOf(ctx, cfg, args...)
		if err != nil {
			return 0, err
		}
		return rss, waitDepth(conn, queue, n, time.Minute)
	}
	ls, err := peak("dlq", "ls", queue, "--json")
	if err != nil {
		return nil, err
	}
	show, err := peak("dlq", "show", queue, "--id", fmt.Sprintf("big-%d", n-1))
	if err != nil {
		return nil, err
	}
	stats, err := peak("dlq", "stats", queue, "--json")
	if err != nil {
		return nil, err
	}
	// Last, as it empties the DLQ: every message moved to a queue of
	// its own.
	const target = "big.target"
	if err := declareAll(conn, "", []declaration{{name: target}}); err != nil {
		return nil, err
	}
	replay, err := b.peakOf(ctx, cfg, "dlq", "replay", queue, "--to", "/"+target, "--yes", "--json")
	if err != nil {
		return nil, err
	}
	if err := waitDepth(conn, target, n, time.Minute); err != nil {
		return nil, err
	}
	return []row{
		absolute("dlq ls resident memory, six 16 MiB messages", ls, fmtMiB, "bodies: 96 MiB", cmp{"<", 100}),
		absolute("dlq show resident memory, the last of six 16 MiB messages", show, fmtMiB, "bodies: 96 MiB", cmp{"<", 150}),
		absolute("dlq stats resident memory, six 16 MiB messages", stats, fmtMiB, "bodies: 96 MiB", cmp{"<", 150}),
		absolute("dlq replay resident memory, six 16 MiB messages", replay, fmtMiB, "bodies: 96 MiB", cmp{"<", 150}),
	}, nil
}

// peakOf runs warren with args and returns its peak resident memory.
func (b *bench) peakOf(ctx context.Context, cfg string, args ...string) (float64, error) {
	b.logf("warren %v", args)
	cmd := b.warrenCmd(ctx, cfg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	hwm := watchHWM(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("warren %v: %w: %s", args, err, stderr.Bytes())
	}
	rss := <-hwm
	if rss == 0 {
		return 0, errors.New("could not read the resident memory of warren")
	}
	return rss, nil
}
