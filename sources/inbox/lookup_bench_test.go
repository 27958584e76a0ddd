//go:build integration

package inbox

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// benchRows is the inbox table's size: WARREN_BENCH_INBOX_ROWS, 100 000
// by default so `go test -bench` stays quick (the harness in
// testdata/bench fills 1 000 000).
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("WARREN_BENCH_INBOX_ROWS")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// BenchmarkLookupPage is one browse page's lookup: 500 logical IDs, half
// of them applied, in one query against a filled inbox table, beside the
// same query on a plain pgx connection.
func BenchmarkLookupPage(b *testing.B) {
	rows := benchRows()
	db := admin(b)
	ctx := context.Background()
	table := testTable(b, db, "event_id text primary key, processed_at timestamptz not null")
	fill := fmt.Sprintf("INSERT INTO %s SELECT 'evt-' || lpad(g::text, 7, '0'), now() - make_interval(secs => g) FROM generate_series(0, %d) g", table, rows-1)
	if _, err := db.Exec(ctx, fill); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, "ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	pages := make([][]string, 64)
	for p := range pages {
		for i := range 250 {
			n := (p*7919 + i*104729) % rows
			pages[p] = append(pages[p], fmt.Sprintf("evt-%07d", n), fmt.Sprintf("missing-%07d", n))
		}
	}
	c := open(b, Options{Table: table, IDColumn: "event_id", TimeColumn: "processed_at"})
	b.Run("warren", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			found, err := c.Lookup(ctx, pages[i%len(pages)])
			if err != nil {
				b.Fatal(err)
			}
			if len(found) == 0 {
				b.Fatal("no applied ID found")
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		sql := "SELECT event_id::text, processed_at::timestamptz FROM " + table + " WHERE event_id = ANY($1)"
		for i := 0; b.Loop(); i++ {
			r, err := db.Query(ctx, sql, pages[i%len(pages)])
			if err != nil {
				b.Fatal(err)
			}
			for r.Next() {
			}
			r.Close()
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
