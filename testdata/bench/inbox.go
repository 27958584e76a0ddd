package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warrenops/warren/sources/inbox"
)

// pageIDs is a browse page's worth of logical IDs.
const pageIDs = 500

const lookups = 30

// inbox measures one page's inbox lookup (500 IDs, half of them applied)
// against a table of rows rows, beside the same query sent on a plain pgx
// connection.
func (b *bench) inbox(rows int) ([]row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	db, err := pgx.Connect(ctx, b.cfg.pgDSN)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	defer db.Close(context.Background())
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	table := "warren_bench_inbox_" + hex.EncodeToString(rnd[:])
	b.logf("filling %s with %d rows", table, rows)
	if _, err := db.Exec(ctx, "CREATE TABLE "+table+" (event_id text PRIMARY KEY, processed_at timestamptz NOT NULL)"); err != nil {
		return nil, err
	}
	defer func() { _, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) }()
	fill := fmt.Sprintf("INSERT INTO %s SELECT 'evt-' || lpad(g::text, 7, '0'), now() - make_interval(secs => g) FROM generate_series(0, %d) g", table, rows-1)
	if _, err := db.Exec(ctx, fill); err != nil {
		return nil, err
	}
	if _, err := db.Exec(ctx, "ANALYZE "+table); err != nil {
		return nil, err
	}

	client, err := inbox.Open(ctx, inbox.Options{DSN: b.cfg.pgDSN, Table: table, IDColumn: "event_id", TimeColumn: "processed_at"})
	if err != nil {
		return nil, err
	}
	defer client.Close()
	start := time.Now()
	if _, err := client.Lookup(ctx, page(rows)); err != nil {
		return nil, err
	}
	first := time.Since(start)

	plainSQL := fmt.Sprintf("SELECT event_id::text, processed_at::timestamptz FROM %s WHERE event_id = ANY($1)", table)
	var warm, plain []time.Duration
	for range lookups {
		ids := page(rows)
		start := time.Now()
		found, err := client.Lookup(ctx, ids)
		if err != nil {
			return nil, err
		}
		warm = append(warm, time.Since(start))
		if len(found) != pageIDs/2 {
			return nil, fmt.Errorf("inbox lookup found %d of the %d applied IDs", len(found), pageIDs/2)
		}
		start = time.Now()
		r, err := db.Query(ctx, plainSQL, ids)
		if err != nil {
			return nil, err
		}
		for r.Next() {
		}
		r.Close()
		if err := r.Err(); err != nil {
			return nil, err
		}
		plain = append(plain, time.Since(start))
	}
	label := thousands(rows) + "-row inbox"
	lookup := versus("inbox page lookup (500 IDs), "+label, ms(median(warm)), ms(median(plain)), fmtMs, nil)
	lookup.target, lookup.verdict = "< 10 ms", verdict(ms(median(warm)) < 10)
	return []row{
		lookup,
		info("  slowest of the lookups, "+label, fmtMs(ms(slowest(warm))), fmtMs(ms(slowest(plain)))),
		info("  first lookup, connecting included, "+label, fmtMs(ms(first)), ""),
	}, nil
}

// page is pageIDs distinct IDs: half present in the table, half absent.
func page(rows int) []string {
	ids := make([]string, 0, pageIDs)
	seen := map[int64]bool{}
	for len(ids) < pageIDs {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(rows)))
		if !seen[n.Int64()] {
			seen[n.Int64()] = true
			ids = append(ids, fmt.Sprintf("evt-%07d", n.Int64()), fmt.Sprintf("missing-%07d", n.Int64()))
		}
	}
	return ids
}

func slowest(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
