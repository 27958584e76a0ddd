//go:build integration

package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func testDSN() string {
	if dsn := os.Getenv("WARREN_TEST_PG_DSN"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// pgTable makes a fresh audit table as `warren audit init-db` would,
// owned by a role of its own (table_owner) with INSERT and SELECT
// granted to another (table_ops, which openPG connects as), and returns
// its name and an admin connection for tampering, on which triggers do
// not fire: a superuser who turns them off can change any row. The
// table, its function and both roles are dropped at cleanup.
func pgTable(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testDSN())
	if err != nil {
		t.Fatalf("PostgreSQL is required for this test (set WARREN_TEST_PG_DSN): %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "audit_test_" + hex.EncodeToString(b[:])
	owner, ops := table+"_owner", table+"_ops"
	t.Cleanup(func() {
		ctx := context.Background()
		for _, q := range []string{
			"DROP OWNED BY " + pgx.Identifier{owner}.Sanitize() + ", " + pgx.Identifier{ops}.Sanitize() + " CASCADE",
			"DROP ROLE IF EXISTS " + pgx.Identifier{owner}.Sanitize() + ", " + pgx.Identifier{ops}.Sanitize(),
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
		conn.Close(ctx)
	})
	for _, q := range []string{
		"CREATE ROLE " + pgx.Identifier{owner}.Sanitize() + " NOLOGIN",
		"CREATE ROLE " + pgx.Identifier{ops}.Sanitize() + " LOGIN",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := InitDB(ctx, testDSN(), Schema{Table: table, Owner: owner, Operators: ops}); err != nil {
		t.Fatalf("init-db: %v", err)
	}
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	return table, conn
}

// roleDSN is the test database's DSN for role, with query parameters
// added.
func roleDSN(t *testing.T, role, params string) string {
	t.Helper()
	u, err := url.Parse(testDSN())
	if err != nil || u.Scheme == "" {
		t.Fatalf("WARREN_TEST_PG_DSN must be a postgres:// URL for this test: %v", err)
	}
	u.User = url.User(role)
	if params != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += params
	}
	return u.String()
}

// openPG opens table as its operators' role, which may INSERT and SELECT
// only.
func openPG(t *testing.T, table string) *PGStore {
	t.Helper()
	s, err := OpenPostgres(roleDSN(t, table+"_ops", ""), table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgresStoreKeepsAChainInTheTableInitDBMade(t *testing.T) {
	ctx := context.Background()
	table, admin := pgTable(t)
	s := openPG(t, table)
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	var rows, version int
	if err := admin.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+table+"), (SELECT version FROM "+table+"_schema)").Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || version != schemaVersion {
		t.Fatalf("after Check: %d rows (want 0, Check adds none), schema version %d", rows, version)
	}
	var want []Record
	for i := 1; i <= 20; i++ {
		r, err := s.Append(ctx, sample(i))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	sameRecords(t, scanAll(t, s), want)
	last, ok, err := s.Last(ctx)
	if err != nil || !ok || last.Seq != 20 || last.Hash != want[19].Hash {
		t.Fatalf("Last = seq %d %v %v", last.Seq, ok, err)
	}
	mustVerify(t, openPG(t, table), 20)
}

func TestPostgresVerifyNamesTheFirstBrokenSeq(t *testing.T) {
	tests := []struct {
		name, tamper string
		wantSeq      int64
		wantReason   string
	}{
		{"a row deleted", "DELETE FROM %s WHERE seq = 4", 4, "seq gap"},
		{"a value edited", `UPDATE %s SET record = replace(record, '"queue":"orders"', '"queue":"orderz"') WHERE seq = 6`, 6, "hash mismatch"},
		{"a record made unreadable", "UPDATE %s SET record = '{' WHERE seq = 7", 7, "row seq 7: unreadable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			table, admin := pgTable(t)
			s := openPG(t, table)
			for i := 1; i <= 8; i++ {
				if _, err := s.Append(ctx, sample(i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := admin.Exec(ctx, fmt.Sprintf(tt.tamper, table)); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.BrokenSeq != tt.wantSeq || !strings.Contains(res.Reason, tt.wantReason) {
				t.Fatalf("Verify = %+v, want broken at seq %d with %q", res, tt.wantSeq, tt.wantReason)
			}
		})
	}
}

func TestConcurrentPostgresStoresKeepOneChain(t *testing.T) {
	testConcurrentAppends(t, "")
}

// A database whose default isolation is repeatable read takes the
// transaction's snapshot before the append's lock is granted: the store
// must not read the last record from it, or two operators collide on a
// seq.
func TestConcurrentPostgresStoresKeepOneChainUnderRepeatableRead(t *testing.T) {
	testConcurrentAppends(t, "default_transaction_isolation=repeatable%20read")
}

func testConcurrentAppends(t *testing.T, params string) {
	table, _ := pgTable(t)
	dsn := roleDSN(t, table+"_ops", params)
	const writers, each = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenPostgres(dsn, table)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				r := sample(i)
				r.Operator = fmt.Sprintf("writer-%d", w)
				if _, err := s.Append(context.Background(), r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustVerify(t, openPG(t, table), writers*each)
}

func TestUnreachablePostgresFailsCheckWithoutLeakingTheDSN(t *testing.T) {
	const password = "s3cr3t-Pa55"
	dsn := "postgres://warren:" + password + "@127.0.0.1:1/audit?sslmode=disable&connect_timeout=5"
	s, err := Open("postgres", dsn)
	if err != nil {
		t.Fatalf("Open must not connect: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	checkErr := s.Check(ctx)
	_, appendErr := s.Append(ctx, sample(1))
	for name, err := range map[string]error{"Check": checkErr, "Append": appendErr} {
		if err == nil {
			t.Fatalf("%s against port 1 succeeded", name)
		}
		msg := err.Error()
		if strings.Contains(msg, password) || strings.Contains(msg, dsn) {
			t.Fatalf("%s error leaks the DSN: %s", name, msg)
		}
		if !strings.Contains(msg, "connect") || !strings.Contains(msg, "127.0.0.1:1") {
			t.Fatalf("%s error should say it could not connect and where: %s", name, msg)
		}
	}
	if strings.Contains(s.Describe(), password) {
		t.Fatalf("Describe leaks the password: %s", s.Describe())
	}
}

func TestOpenPostgresRejectsBadInputWithoutEchoingIt(t *testing.T) {
	tests := []struct{ name, dsn, table string }{
		{"no DSN", "", DefaultTable},
		{"unparsable DSN", "postgres://u:hunter2@host:notaport/db", DefaultTable},
		{"table name with SQL", testDSN(), "audit; DROP TABLE x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenPostgres(tt.dsn, tt.table)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}

func TestPostgresAppendAllStoresAGroupInOneTransaction(t *testing.T) {
	ctx := context.Background()
	table, _ := pgTable(t)
	s := openPG(t, table)
	first, err := s.Append(ctx, sample(1))
	if err != nil {
		t.Fatal(err)
	}
	group, err := s.AppendAll(ctx, []Record{sample(2), sample(3), sample(4)})
	if err != nil {
		t.Fatal(err)
	}
	bad := sample(5)
	bad.Action = ""
	if _, err := s.AppendAll(ctx, []Record{sample(5), bad}); err == nil {
		t.Fatal("a group with a record without an action was stored")
	}
	sameRecords(t, scanAll(t, s), append([]Record{first}, group...))
	mustVerify(t, openPG(t, table), 4)
}

// The database searches the stored lines for the needles, as the file
// store does, long records too.
func TestPostgresScanWhereReadsTheRecordsHoldingANeedle(t *testing.T) {
	ctx := context.Background()
	table, _ := pgTable(t)
	s := openPG(t, table)
	if _, err := s.AppendAll(ctx, whereLog()); err != nil {
		t.Fatal(err)
	}
	got := scanSeqs(t, func(fn func(Record) error) error { return ScanWhere(ctx, s, whereNeedles, fn) })
	if fmt.Sprint(got) != "[7 10 20 30]" {
		t.Fatalf("ScanWhere read seqs %v, want [7 10 20 30]", got)
	}
	if all := scanSeqs(t, func(fn func(Record) error) error { return s.Scan(ctx, fn) }); len(all) != 30 {
		t.Fatalf("Scan read %d records, want 30", len(all))
	}
}

// A follower of the team's table is given each record once, as it is
// appended, read from the seq after the last it was given.
func TestPostgresTailerGivesWhatWasAppendedSinceItLastLooked(t *testing.T) {
	table, _ := pgTable(t)
	s := openPG(t, table)
	followFive(t, s, NewTailer(s))
}
