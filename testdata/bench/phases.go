package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// replayPhases is a replay split into its phases, timed inside the
// harness's process with the packages `warren dlq replay` calls, in the
// same order: the preview (a feed reads and decides every message, then
// returns them all), then the stream (a feed of the same N, each page
// decided, recorded, published with confirms on a connection of its own,
// each confirm recorded before its source is acked).
type replayPhases struct {
	preview, stream time.Duration
}

func (b *bench) phases(ctx context.Context, conn *amqp.Connection, vh, queue string, n int) (*replayPhases, error) {
	store, err := audit.OpenFile(filepath.Join(b.dir, vh+"-phases.jsonl"))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	pubConn, err := b.dial(vh)
	if err != nil {
		return nil, err
	}
	defer pubConn.Close()
	var ph replayPhases
	q := domain.QueueInfo{Vhost: vh, Name: queue, Type: domain.TypeClassic, DeliveryLimit: -1}
	req := actions.Request{Action: actions.ActionReplay, Vhost: vh, Queue: queue, Now: time.Now()}

	start := time.Now()
	feed, err := dlq.OpenFeed(conn, q, dlq.Options{}, n, 0)
	if err != nil {
		return nil, err
	}
	pre, err := actions.NewPreview(ctx, feed, req, nil)
	if err != nil {
		return nil, err
	}
	if err := feed.Close(); err != nil {
		return nil, err
	}
	ph.preview = time.Since(start)
	if pre.Moving != n {
		return nil, fmt.Errorf("the preview moves %d of %d", pre.Moving, n)
	}

	host, _ := os.Hostname()
	env := actions.Env{Conn: pubConn, Audit: store, Operator: "bench", Host: host, Context: "bench", ConnUser: b.cfg.user}
	start = time.Now()
	if feed, err = dlq.OpenFeed(conn, q, dlq.Options{}, pre.Read, 0); err != nil {
		return nil, err
	}
	res, err := actions.RunWalk(ctx, feed, actions.Walk{Request: req, Limit: pre.Read, Expect: pre.Moving, Groups: pre.Groups}, env, nil)
	if cerr := feed.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	ph.stream = time.Since(start)
	if res.Confirmed != n {
		return nil, fmt.Errorf("replayed %d of %d", res.Confirmed, n)
	}
	return &ph, nil
}
