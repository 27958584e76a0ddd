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
	"github.com/warrenops/warren/sources/dlq"
)

// replayPhases is a replay split into its phases, timed inside the
// harness's process with the packages `warren dlq replay` calls, in the
// same order: hold the whole DLQ on a browse session (pages of 4096),
// plan, then execute (intent record, pipelined publish with confirms on
// a connection of its own, one ack per confirmed delivery, outcome
// records).
type replayPhases struct {
	hold, plan, execute time.Duration
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

	start := time.Now()
	sess, err := dlq.Open(ctx, conn, dlq.QueueInfo{Vhost: vh, Name: queue, Type: dlq.TypeClassic, DeliveryLimit: -1}, dlq.Options{Window: 4096})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	for {
		page, err := sess.Next(ctx)
		if err != nil {
			return nil, err
		}
		if page.End {
			break
		}
	}
	letters := sess.Letters()
	ph.hold = time.Since(start)
	if len(letters) != n {
		return nil, fmt.Errorf("the browse session holds %d of %d", len(letters), n)
	}

	start = time.Now()
	plan, err := actions.NewPlan(actions.Request{Action: actions.ActionReplay, Vhost: vh, Queue: queue, Letters: letters, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	ph.plan = time.Since(start)

	host, _ := os.Hostname()
	env := actions.Env{Conn: pubConn, Session: sess, Audit: store, Operator: "bench", Host: host, Context: "bench", ConnUser: b.cfg.user}
	start = time.Now()
	res, err := actions.Execute(ctx, plan, env, nil)
	if err != nil {
		return nil, err
	}
	ph.execute = time.Since(start)
	if res.Confirmed != n {
		return nil, fmt.Errorf("replayed %d of %d", res.Confirmed, n)
	}
	return &ph, nil
}
