package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const createInbox = `CREATE TABLE IF NOT EXISTS ` + inboxTable + ` (
	event_id text PRIMARY KEY,
	processed_at timestamptz NOT NULL
)`

const upsertInbox = `INSERT INTO ` + inboxTable + ` (event_id, processed_at)
SELECT * FROM unnest($1::text[], $2::timestamptz[])
ON CONFLICT (event_id) DO UPDATE SET processed_at = EXCLUDED.processed_at`

// seedInbox creates the inbox table and marks every other distinct event ID
// of orders.dlq as processed (the effect was committed but the ack was
// lost), plus a trail of effects over the last six minutes so an effect
// rate shows at once. The IDs are deterministic and upserted, so reruns do
// not grow the table; rows Run left more than a day ago are trimmed.
func seedInbox(ctx context.Context, dsn string, dead []outgoing, now time.Time) (*Inbox, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, createInbox); err != nil && !isUniqueViolation(err) {
		return nil, fmt.Errorf("create %s: %w", inboxTable, err)
	}
	var ids []string
	var times []time.Time
	seen := map[string]bool{}
	for _, o := range dead {
		if o.dlq != qOrdersDLQ || o.eventID == "" || seen[o.eventID] {
			continue
		}
		seen[o.eventID] = true
		if len(seen)%2 == 1 {
			ids = append(ids, o.eventID)
			times = append(times, o.pub.Timestamp.Add(2*time.Second))
		}
	}
	applied := append([]string(nil), ids...)
	for i := range 90 {
		ids = append(ids, stableID("processed", i))
		times = append(times, now.Add(-time.Duration(i)*4*time.Second))
	}
	if _, err := conn.Exec(ctx, upsertInbox, ids, times); err != nil {
		return nil, fmt.Errorf("fill %s: %w", inboxTable, err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM `+inboxTable+` WHERE processed_at < now() - interval '1 day'`); err != nil {
		return nil, fmt.Errorf("trim %s: %w", inboxTable, err)
	}
	return &Inbox{Table: inboxTable, IDColumn: "event_id", TimeColumn: "processed_at", DSNEnv: InboxDSNEnv, Applied: applied}, nil
}

// Two seeds racing on CREATE TABLE IF NOT EXISTS can collide on the
// catalog's unique index; the table exists either way.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// inboxWriter records the orders service's effects while Run goes on. It
// is used from one goroutine only. After the first failure it logs one line
// and stops writing, so a database that goes away does not end the demo.
type inboxWriter struct {
	conn *pgx.Conn
	log  io.Writer
}

func openInbox(ctx context.Context, dsn string, log io.Writer) *inboxWriter {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		fmt.Fprintf(log, "demo: inbox unavailable, effects not recorded: %s\n", oneLine(err))
		return &inboxWriter{log: log}
	}
	return &inboxWriter{conn: conn, log: log}
}

func (w *inboxWriter) applied(ctx context.Context, eventID string) {
	if w.conn == nil {
		return
	}
	_, err := w.conn.Exec(ctx, `INSERT INTO `+inboxTable+` (event_id, processed_at) VALUES ($1, now()) ON CONFLICT (event_id) DO NOTHING`, eventID)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(w.log, "demo: inbox write failed, effects no longer recorded: %s\n", oneLine(err))
		w.close()
	}
}

func (w *inboxWriter) close() {
	if w.conn != nil {
		w.conn.Close(context.Background())
		w.conn = nil
	}
}

// oneLine flattens pgx's multi-line connection errors into one log line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
