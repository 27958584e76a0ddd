//go:build integration

package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/inbox"
)

const testDSN = "postgres://postgres@127.0.0.1:5432/test"

// inboxTable creates an inbox table of its own with effects 10 s, 20 s
// and two hours old, and drops it when t ends.
func inboxTable(t *testing.T) string {
	t.Helper()
	ctx := testCtx(t)
	db, err := pgx.Connect(ctx, testDSN)
	if err != nil {
		t.Fatalf("PostgreSQL at %s unreachable: %v", testDSN, err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "warren_live_inbox_" + hex.EncodeToString(rnd[:])
	_, err = db.Exec(ctx, `CREATE TABLE `+name+` (event_id text PRIMARY KEY, processed_at timestamptz NOT NULL);
		INSERT INTO `+name+` VALUES ('ev-a', now() - interval '10 seconds'), ('ev-b', now() - interval '20 seconds'), ('ev-c', now() - interval '2 hours')`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP TABLE `+name) })
	return name
}

type testInbox struct{ *inbox.Client }

func (c testInbox) Close() error { c.Client.Close(); return nil }

// inboxLive is an adapter whose config gives orders an inbox at dsn; it
// counts the clients it opens.
func inboxOps(t *testing.T, dsn, table string, opened *atomic.Int32) *Ops {
	t.Helper()
	c := &config.Context{Name: "test", Queues: []config.Queue{{
		Name: "orders", DLQ: "orders.dlq",
		Inbox: &config.Inbox{Table: table, IDColumn: "event_id", TimeColumn: "processed_at"},
	}}}
	l := newOps(t, c)
	l.c.OpenInbox = func(ctx context.Context, vhost, queue string) (InboxClient, error) {
		q := c.QueueConfig(vhost, queue)
		if q == nil || q.Inbox == nil {
			return nil, nil
		}
		opened.Add(1)
		in, err := inbox.Open(ctx, inbox.Options{DSN: dsn, Table: q.Inbox.Table, IDColumn: q.Inbox.IDColumn, TimeColumn: q.Inbox.TimeColumn})
		if err != nil {
			return nil, err
		}
		return testInbox{in}, nil
	}
	return l
}

func TestEffectIsTheInboxPaceSharedByAQueueAndItsDLQ(t *testing.T) {
	var opened atomic.Int32
	l := inboxOps(t, testDSN, inboxTable(t), &opened)
	ctx := testCtx(t)
	orders := domain.QueueRef{Vhost: "/", Name: "orders"}
	for ref, want := range map[domain.QueueRef]bool{orders: true, {Vhost: "/", Name: "orders.dlq"}: false, {Vhost: "/", Name: "payments"}: false} {
		if got := l.HasInbox(ref); got != want {
			t.Errorf("HasInbox(%s) = %v, want %v", ref.Name, got, want)
		}
	}
	e, err := l.Effect(ctx, orders, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	age, ok := e.LastAge()
	if e.Count != 2 || !ok || age < 9*time.Second || age > time.Minute {
		t.Fatalf("effect = %+v (last %s ago), want 2 effects in the last minute, the last about 10 s ago", e, age)
	}
	if _, err := l.Effect(ctx, domain.QueueRef{Vhost: "/", Name: "orders.dlq"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lookup(ctx, domain.QueueRef{Vhost: "/", Name: "orders.dlq"}, []string{"ev-a"}); err != nil {
		t.Fatal(err)
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("opened %d inbox clients for one inbox, want 1", n)
	}
}

func TestEffectOfAnUnreachableDatabaseSaysWhy(t *testing.T) {
	var opened atomic.Int32
	l := inboxOps(t, "postgres://postgres@127.0.0.1:1/test", "inbox", &opened)
	_, err := l.Effect(testCtx(t), domain.QueueRef{Vhost: "/", Name: "orders"}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("effect error = %v, want one naming the database", err)
	}
}

// The plan skips what the inbox applied; where the inbox cannot answer,
// nothing is skipped and the operator is told why, on the command line
// and in the dashboard's prompt alike.
func TestAppliedSaysWhyWhenTheInboxCannotAnswer(t *testing.T) {
	var opened atomic.Int32
	letters := []domain.DeadLetter{
		{LogicalID: "ev-a", LogicalIDFrom: domain.IDHeader},
		{LogicalID: "9f2c", LogicalIDFrom: domain.IDHash},
	}
	down := inboxOps(t, "postgres://postgres@127.0.0.1:1/test", "inbox", &opened)
	applied, known, note := down.Applied(testCtx(t), domain.QueueRef{Vhost: "/", Name: "orders"}, letters)
	if applied != nil || known || !strings.Contains(note, "applied messages cannot be skipped") || !strings.Contains(note, "127.0.0.1:1") {
		t.Errorf("inbox down: applied %v, known %v, note %q; want unknown with the database named", applied, known, note)
	}
	none := newOps(t, &config.Context{Name: "test"})
	if applied, known, note := none.Applied(testCtx(t), domain.QueueRef{Vhost: "/", Name: "orders"}, letters); applied != nil || known || note != "" {
		t.Errorf("no inbox: applied %v, known %v, note %q; want unknown and silent", applied, known, note)
	}
}
