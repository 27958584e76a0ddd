package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// pgTable returns a fresh table name and an admin connection for tampering;
// both tables the store creates are dropped at cleanup.
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
	t.Cleanup(func() {
		ctx := context.Background()
		for _, tb := range []string{table, table + "_schema"} {
			if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{tb}.Sanitize()); err != nil {
				t.Errorf("drop %s: %v", tb, err)
			}
		}
		conn.Close(ctx)
	})
	return table, conn
}

func openPG(t *testing.T, table string) *PGStore {
	t.Helper()
	s, err := OpenPostgres(testDSN(), table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgresStoreCreatesItsTableAndKeepsAChain(t *testing.T) {
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
	testConcurrentAppends(t, testDSN())
}

// A database whose default isolation is repeatable read takes the
// transaction's snapshot before the append's lock is granted: the store
// must not read the last record from it, or two operators collide on a
// seq.
func TestConcurrentPostgresStoresKeepOneChainUnderRepeatableRead(t *testing.T) {
	dsn := testDSN()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	testConcurrentAppends(t, dsn+sep+"default_transaction_isolation=repeatable%20read")
}

func testConcurrentAppends(t *testing.T, dsn string) {
	table, _ := pgTable(t)
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
