package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// mgmtPage is the page size of the management API's "get messages"
// anchor, the same as warren's browse page.
const mgmtPage = 500

// scan measures `warren dlq stats` on n dead letters of 512 bytes against
// a plain consumer reading the same queue the same way (manual ack,
// unlimited prefetch, everything returned by closing the channel) and
// against the management API's "get messages" in pages. Each reader runs
// twice, alternating, and keeps its faster run.
func (b *bench) scan(n int) ([]row, error) {
	rows, err := b.scanOf(n, "dead letters", "orders.dlq", func(ctx context.Context, conn *amqp.Connection, dlq string) error {
		return fillByMaxLength(ctx, conn, "orders", dlq, n)
	})
	if err != nil {
		return rows, err
	}
	// A framework's error queue: every message is read by its
	// convention and counted in a failure group by its normalised error
	// message (docs/ARCHITECTURE.md §4.12), in the same pass.
	more, err := b.scanOf(n, "MassTransit faults", "orders_error", func(ctx context.Context, conn *amqp.Connection, q string) error {
		return fillWithFaults(ctx, conn, q, n)
	})
	return append(rows, more...), err
}

// fillWithFaults publishes n messages into queue as MassTransit moves
// faulted messages to its error queue: its fault headers, with numbers in
// the error messages that make three failure groups.
func fillWithFaults(ctx context.Context, conn *amqp.Connection, queue string, n int) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		return err
	}
	kinds := []struct{ typ, msg string }{
		{"Orders.OrderNotFoundException", "Order %d not found"},
		{"System.TimeoutException", "Stock service timed out after %d ms"},
		{"Orders.ValidationException", "Customer 'c-%d' has no address"},
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := publishConfirmed(ctx, conn, "", queue, n, 2048, false, func(i int) amqp.Publishing {
		p := deadLetterMsg(i)
		k := kinds[i%len(kinds)]
		p.Headers = amqp.Table{
			"MT-Reason": "fault", "MT-Fault-ExceptionType": k.typ, "MT-Fault-Message": fmt.Sprintf(k.msg, 1000+i),
			"MT-Fault-StackTrace":   "   at Orders.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/SubmitOrderConsumer.cs:line 42",
			"MT-Fault-InputAddress": "rabbitmq://localhost/orders", "MT-Fault-Timestamp": at, "MT-Fault-RetryCount": int32(2),
		}
		return p
	}); err != nil {
		return err
	}
	return waitDepth(conn, queue, n, 2*time.Minute)
}

// scanOf measures one DLQ that fill fills with n messages.
func (b *bench) scanOf(n int, what, dlq string, fill func(context.Context, *amqp.Connection, string) error) ([]row, error) {
	vh, conn, release, err := b.openVhost(fmt.Sprintf("scan-%d-%s", n, strings.ReplaceAll(dlq, "_", "-")))
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	b.logf("filling %s with %d %s in %s", dlq, n, what, vh)
	if err := fill(ctx, conn, dlq); err != nil {
		return nil, err
	}
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	var (
		best, raw = time.Duration(1<<63 - 1), time.Duration(1<<63 - 1)
		wall      time.Duration
		rss       float64
	)
	readWarren := func() error {
		b.logf("warren dlq stats on %d", n)
		s, err := b.statsCommand(ctx, cfg, dlq, n)
		if err != nil {
			return err
		}
		if s.scan < best {
			best, wall = s.scan, s.wall
		}
		rss = max(rss, s.rssMiB)
		return waitDepth(conn, dlq, n, time.Minute)
	}
	readPlain := func() error {
		b.logf("plain consumer on %d", n)
		took, err := rawRead(conn, dlq, n)
		if err != nil {
			return err
		}
		raw = min(raw, took)
		return waitDepth(conn, dlq, n, time.Minute)
	}
	// Two rounds in opposite orders, so neither reader always follows the
	// other's requeue.
	for _, order := range [][]func() error{{readWarren, readPlain}, {readPlain, readWarren}} {
		for _, read := range order {
			if err := read(); err != nil {
				return nil, err
			}
		}
	}
	b.logf("management API get messages on %d", n)
	mgmtTook, got, err := b.mgmtGet(vh, dlq, n)
	if err != nil {
		return nil, err
	}
	label := thousands(n) + " " + what
	return []row{
		versus("scan rate vs plain consumer, "+label, rate(n, best), rate(n, raw), fmtRate, &cmp{">=", 0.9}),
		versus("scan rate vs mgmt get messages, "+label, rate(n, best), rate(got, mgmtTook), fmtRate, nil),
		info("  whole `dlq stats` command, "+label, fmtMs(ms(wall)), ""),
		absolute("scan resident memory, "+label, rss, fmtMiB, "", cmp{"<", 150}),
	}, nil
}

type statsRun struct {
	scan, wall time.Duration
	rssMiB     float64
}

// statsCommand runs `warren dlq stats QUEUE --json`; the scan's own time
// is the one it reports (from opening its channel to the last message),
// the boundaries of the plain consumer's figure.
func (b *bench) statsCommand(ctx context.Context, cfg, queue string, n int) (*statsRun, error) {
	cmd := b.warrenCmd(ctx, cfg, "dlq", "stats", queue, "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	peak := watchHWM(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("warren dlq stats: %w: %s", err, stderr.Bytes())
	}
	wall := time.Since(start)
	rss := <-peak
	var out struct {
		Total    int     `json:"total"`
		Complete bool    `json:"complete"`
		Seconds  float64 `json:"scan_seconds"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("warren dlq stats --json: %w", err)
	}
	if out.Total != n || !out.Complete {
		return nil, fmt.Errorf("warren dlq stats read %d of %d (complete %v)", out.Total, n, out.Complete)
	}
	if rss == 0 {
		return nil, errors.New("could not read the resident memory of warren dlq stats")
	}
	return &statsRun{scan: time.Duration(out.Seconds * float64(time.Second)), wall: wall, rssMiB: rss}, nil
}

// watchHWM polls a process's VmHWM every 10 ms until it exits and then
// sends the last value read. The rusage of a finished child is no
// substitute: with vfork, ru_maxrss also counts the parent's resident
// set at the time of the exec.
func watchHWM(pid int) <-chan float64 {
	out := make(chan float64, 1)
	go func() {
		var last float64
		for {
			v, err := vmHWM(pid)
			if err != nil {
				out <- last
				return
			}
			last = max(last, v)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return out
}

// rawRead reads n messages with a plain consumer and gives them back by
// closing its channel.
func rawRead(conn *amqp.Connection, queue string, n int) (time.Duration, error) {
	start := time.Now()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.Close()
	if err := ch.Qos(0, 0, false); err != nil {
		return 0, err
	}
	deliveries, err := ch.Consume(queue, "bench-raw", false, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	var size int64
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for got := 0; got < n; got++ {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return 0, errors.New("plain consumer lost its channel")
			}
			size += int64(len(d.Body))
		case <-timeout.C:
			return 0, fmt.Errorf("plain consumer read %d of %d in a minute", got, n)
		}
	}
	took := time.Since(start)
	if size != int64(n)*bodySize {
		return 0, fmt.Errorf("plain consumer read %d bytes, want %d", size, n*bodySize)
	}
	return took, nil
}

// mgmtGet is the management API's "get messages" as operators use it,
// pages of mgmtPage with "Nack message requeue true", until n messages
// came back. A requeued page goes back to the head of the queue, so every
// page reads the same first messages: the figure is what the mechanism
// costs per message, the most it could read.
func (b *bench) mgmtGet(vh, queue string, n int) (time.Duration, int, error) {
	path := "/api/queues/" + url.PathEscape(vh) + "/" + url.PathEscape(queue) + "/get"
	body := map[string]any{"count": mgmtPage, "ackmode": "ack_requeue_true", "encoding": "auto", "truncate": 50000}
	got := 0
	start := time.Now()
	for got < n {
		var page []struct {
			PayloadBytes int `json:"payload_bytes"`
		}
		if _, err := b.mgmt(http.MethodPost, path, body, &page); err != nil {
			return 0, 0, err
		}
		if len(page) == 0 {
			return 0, 0, errors.New("get messages returned an empty page")
		}
		got += len(page)
	}
	return time.Since(start), got, nil
}
