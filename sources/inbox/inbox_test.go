//go:build integration

package inbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/warrenops/warren/domain"
)

// The integration tests use the real PostgreSQL the design names; a
// missing server fails them.
const testDSN = "postgres://postgres@127.0.0.1:5432/test"

// admin is a writable connection for setting tables up; warren's own
// connection is read-only.
func admin(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testDSN)
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432 unreachable (it must run for these tests): %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// testTable creates a table of its own for one test, dropped at cleanup.
func testTable(t testing.TB, db *pgx.Conn, columns string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "warren_inbox_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := db.Exec(ctx, "CREATE TABLE "+name+" ("+columns+")"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(ctx, "DROP TABLE IF EXISTS "+name) })
	return name
}

func open(t testing.TB, o Options) *Client {
	t.Helper()
	if o.DSN == "" {
		o.DSN = testDSN
	}
	c, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestLookupTellsAppliedFromPending(t *testing.T) {
	db := admin(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		columns  string
		rows     []string
		ids      []string
		applied  []string
		withTime bool
	}{
		{"text IDs with a time column", "event_id text primary key, processed_at timestamptz not null",
			[]string{"E-1", "E-2"}, []string{"E-1", "E-2", "E-3", "sha256:0011223344556677"}, []string{"E-1", "E-2"}, true},
		{"uuid IDs in any spelling; IDs that are not UUIDs are pending", "event_id uuid primary key, processed_at timestamp",
			[]string{"6f1c7e2a-1111-4222-8333-944455556666"},
			[]string{"6F1C7E2A-1111-4222-8333-944455556666", "{6f1c7e2a-1111-4222-8333-944455556666}", "not-a-uuid", "00000000-0000-0000-0000-000000000000"},
			[]string{"6F1C7E2A-1111-4222-8333-944455556666", "{6f1c7e2a-1111-4222-8333-944455556666}"}, true},
		{"bigint IDs; text that is not a number is pending", "event_id bigint primary key, processed_at timestamptz",
			[]string{"7", "42"}, []string{"007", "42", "x-1", "99999999999999999999"}, []string{"007", "42"}, true},
		{"no time column gives a zero time", "event_id varchar(64) primary key",
			[]string{"E-1"}, []string{"E-1", "E-2"}, []string{"E-1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := testTable(t, db, tt.columns)
			for _, r := range tt.rows {
				sql := "INSERT INTO " + table + " VALUES ($1::text::" + strings.Fields(tt.columns)[1] + ", $2)"
				args := []any{r, at}
				if !tt.withTime {
					sql, args = "INSERT INTO "+table+" VALUES ($1)", []any{r}
				}
				if _, err := db.Exec(ctx, sql, args...); err != nil {
					t.Fatal(err)
				}
			}
			o := Options{Table: table, IDColumn: "event_id"}
			if tt.withTime {
				o.TimeColumn = "processed_at"
			}
			c := open(t, o)
			found, err := c.Lookup(ctx, tt.ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tt.ids {
				want := domain.InboxPending
				for _, a := range tt.applied {
					if a == id {
						want = domain.InboxApplied
					}
				}
				if got := domain.InboxStatusOf(found, nil, id); got != want {
					t.Errorf("%s: %s, want %s", id, got, want)
				}
				if when, ok := found[id]; ok && tt.withTime != !when.IsZero() {
					t.Errorf("%s: applied at %v", id, when)
				}
			}
		})
	}
}

// queryCounter counts the statements a pool sends.
type queryCounter struct {
	mu  sync.Mutex
	sql []string
}

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sql = append(q.sql, d.SQL)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestLookupIsOneQueryPerPage(t *testing.T) {
	db := admin(t)
	table := testTable(t, db, "event_id text primary key")
	c := open(t, Options{Table: table, IDColumn: "event_id"})
	counter := &queryCounter{}
	cfg := c.pool.Config()
	cfg.ConnConfig.Tracer = counter
	traced, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.pool.Close()
	c.pool = traced

	page := make([]string, 500)
	for i := range page {
		page[i] = fmt.Sprintf("E-%d", i)
	}
	for range 2 {
		if _, err := c.Lookup(context.Background(), page); err != nil {
			t.Fatal(err)
		}
	}
	if len(counter.sql) != 2 {
		t.Errorf("two pages of 500 IDs ran %d statements (%q), want 2", len(counter.sql), counter.sql)
	}
}

func TestTheConnectionRefusesWrites(t *testing.T) {
	db := admin(t)
	table := testTable(t, db, "event_id text primary key")
	c := open(t, Options{Table: table, IDColumn: "event_id"})
	_, err := c.pool.Exec(context.Background(), "INSERT INTO "+table+" VALUES ('E-1')")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Fatalf("INSERT through the inbox connection: %v, want a read-only error (25006)", err)
	}
}

func TestAStatementPastTheTimeoutIsStopped(t *testing.T) {
	db := admin(t)
	table := testTable(t, db, "event_id text primary key")
	c := open(t, Options{Table: table, IDColumn: "event_id", StatementTimeout: 100 * time.Millisecond})
	_, err := c.pool.Exec(context.Background(), "SELECT pg_sleep(2)")
	if err == nil {
		t.Fatal("a 2 s statement ran under a 100 ms timeout")
	}
	if msg := c.explain("look up the inbox", err).Error(); !strings.Contains(msg, "statement timeout") {
		t.Errorf("explained as %q", msg)
	}
}

func TestUnreachableDatabaseIsUnknownWithAReason(t *testing.T) {
	const dsn = "postgres://warren:s3cret-pw@127.0.0.1:1/test"
	c := open(t, Options{DSN: dsn, Table: "inbox", IDColumn: "event_id", TimeColumn: "processed_at"})
	ctx := context.Background()
	found, err := c.Lookup(ctx, []string{"E-1"})
	if err == nil {
		t.Fatal("lookup against port 1 succeeded")
	}
	if got := domain.InboxStatusOf(found, err, "E-1"); got != domain.InboxUnknown {
		t.Errorf("status %s, want unknown", got)
	}
	_, effErr := c.Effect(ctx, time.Minute)
	for _, e := range []error{err, effErr} {
		msg := e.Error()
		if !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "refused") {
			t.Errorf("reason %q does not say where and why", msg)
		}
		if strings.Contains(msg, "s3cret-pw") || strings.Contains(msg, dsn) || strings.Contains(msg, "warren") {
			t.Errorf("reason %q leaks the DSN", msg)
		}
	}
}

func TestOpenRejectsABadDSNWithoutQuotingIt(t *testing.T) {
	const dsn = "postgres://warren:s3cret-pw@127.0.0.1:notaport/test"
	_, err := Open(context.Background(), Options{DSN: dsn, Table: "inbox", IDColumn: "id"})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "notaport") {
		t.Errorf("Open = %v, want an error that does not quote the DSN", err)
	}
	if _, err := Open(context.Background(), Options{DSN: testDSN}); err == nil {
		t.Error("Open without table and id column succeeded")
	}
}

func TestHostileTableNamesAreQuotedNotRun(t *testing.T) {
	db := admin(t)
	victim := testTable(t, db, "x int")
	c := open(t, Options{Table: `inbox"; DROP TABLE ` + victim + `; --`, IDColumn: "id"})
	_, err := c.Lookup(context.Background(), []string{"E-1"})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("lookup on a hostile name: %v", err)
	}
	if _, err := db.Exec(context.Background(), "SELECT * FROM "+victim); err != nil {
		t.Errorf("the other table is gone: %v", err)
	}
}

func TestEffectGivesRateAndLastEffect(t *testing.T) {
	db := admin(t)
	ctx := context.Background()
	table := testTable(t, db, "event_id text primary key, processed_at timestamptz not null")
	if _, err := db.Exec(ctx, "INSERT INTO "+table+" SELECT 'E-'||i, now() - i * interval '1 second' FROM generate_series(1, 30) i"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO "+table+" VALUES ('old', now() - interval '1 hour')"); err != nil {
		t.Fatal(err)
	}
	c := open(t, Options{Table: table, IDColumn: "event_id", TimeColumn: "processed_at"})
	e, err := c.Effect(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if e.Count != 30 || e.Rate != 0.5 {
		t.Errorf("count %d rate %v, want 30 and 0.5/s", e.Count, e.Rate)
	}
	if age, ok := e.LastAge(); !ok || age < time.Second || age > 5*time.Second {
		t.Errorf("last effect age %v, %v; want about 1 s", age, ok)
	}

	empty := open(t, Options{Table: testTable(t, db, "event_id text, processed_at timestamptz"), IDColumn: "event_id", TimeColumn: "processed_at"})
	if e, err := empty.Effect(ctx, time.Minute); err != nil || e.Count != 0 {
		t.Errorf("empty inbox: %+v, %v", e, err)
	} else if _, ok := e.LastAge(); ok {
		t.Error("empty inbox has a last effect")
	}
	noTime := open(t, Options{Table: table, IDColumn: "event_id"})
	if _, err := noTime.Effect(ctx, time.Minute); !errors.Is(err, ErrNoTimeColumn) {
		t.Errorf("without a time column: %v", err)
	}
}

func TestStatusOf(t *testing.T) {
	found := map[string]time.Time{"a": {}}
	tests := []struct {
		found map[string]time.Time
		err   error
		id    string
		want  domain.InboxStatus
		bool  *bool
	}{
		{found, nil, "a", domain.InboxApplied, ptr(true)},
		{found, nil, "b", domain.InboxPending, ptr(false)},
		{found, errors.New("down"), "a", domain.InboxUnknown, nil},
		{nil, nil, "a", domain.InboxUnknown, nil},
	}
	for _, tt := range tests {
		got := domain.InboxStatusOf(tt.found, tt.err, tt.id)
		if got != tt.want {
			t.Errorf("StatusOf(%v, %v, %q) = %s, want %s", tt.found, tt.err, tt.id, got, tt.want)
		}
		if b := got.Applied(); (b == nil) != (tt.bool == nil) || (b != nil && *b != *tt.bool) {
			t.Errorf("%s.Applied() = %v", got, b)
		}
	}
}

func ptr(b bool) *bool { return &b }

func TestPagerGivesUpOnAFailedDatabaseAndSkipsEmptyIDs(t *testing.T) {
	db := admin(t)
	table := testTable(t, db, "event_id text primary key")
	if _, err := db.Exec(context.Background(), "INSERT INTO "+table+" VALUES ('E-1')"); err != nil {
		t.Fatal(err)
	}
	p := NewPager(open(t, Options{Table: table, IDColumn: "event_id"}), "")
	st, found := p.Statuses(context.Background(), []string{"E-1", "", "E-2"})
	if st[0] != domain.InboxApplied || st[1] != domain.InboxUnknown || st[2] != domain.InboxPending || len(found) != 1 || p.Reason() != "" {
		t.Errorf("statuses %v, found %v, reason %q", st, found, p.Reason())
	}

	down := NewPager(open(t, Options{DSN: "postgres://x@127.0.0.1:1/test", Table: "t", IDColumn: "id"}), "")
	for range 2 {
		start := time.Now()
		st, _ := down.Statuses(context.Background(), []string{"E-1"})
		if st[0] != domain.InboxUnknown || !strings.Contains(down.Reason(), "refused") {
			t.Errorf("down: %v, reason %q", st, down.Reason())
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("a lookup on a failed inbox took %s", time.Since(start))
		}
	}
	if st, _ := NewPager(nil, "").Statuses(context.Background(), []string{"E-1"}); st[0] != domain.InboxUnknown {
		t.Errorf("no inbox: %v", st)
	}
}
