//go:build integration

package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// adminConn is a superuser's connection, triggers on, closed at cleanup.
func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, testDSN())
	if err != nil {
		t.Fatalf("PostgreSQL is required for this test (set WARREN_TEST_PG_DSN): %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// The operators' role may add and read records and nothing else; the
// owner, who keeps every privilege, is stopped by the trigger.
func TestInitDBLetsOperatorsOnlyInsertAndSelect(t *testing.T) {
	ctx := context.Background()
	table, _ := pgTable(t)
	s := openPG(t, table)
	if _, err := s.Append(ctx, sample(1)); err != nil {
		t.Fatalf("the operators cannot append: %v", err)
	}
	mustVerify(t, s, 1)
	g, err := s.Grants(ctx)
	if err != nil || !g.OK() || g.String() != "role "+table+"_ops: INSERT, SELECT only" {
		t.Fatalf("Grants = %q (%+v), %v", g.String(), g, err)
	}

	ops, err := pgx.Connect(ctx, roleDSN(t, table+"_ops", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close(ctx)
	admin := adminConn(t)
	var owner string
	if err := admin.QueryRow(ctx, "SELECT tableowner FROM pg_tables WHERE tablename = $1", table).Scan(&owner); err != nil || owner != table+"_owner" {
		t.Fatalf("the table is owned by %q (%v), want %s_owner", owner, err, table)
	}
	id := pgx.Identifier{table}.Sanitize()
	for _, q := range []string{"UPDATE " + id + " SET outcome = 'x'", "DELETE FROM " + id, "TRUNCATE " + id} {
		if _, err := ops.Exec(ctx, q); sqlState(err) != "42501" {
			t.Errorf("as the operators: %s = %v, want permission denied (42501)", q, err)
		}
		_, err := admin.Exec(ctx, "SET ROLE "+pgx.Identifier{table + "_owner"}.Sanitize()+"; "+q)
		if sqlState(err) != "P0001" || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("as the owner: %s = %v, want the trigger's refusal", q, err)
		}
		if _, err := admin.Exec(ctx, "RESET ROLE"); err != nil {
			t.Fatal(err)
		}
	}
	mustVerify(t, s, 1)
}

// warren never creates its table: the role that did would own it.
func TestPostgresStoreRefusesToCreateItsTable(t *testing.T) {
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "audit_test_" + hex.EncodeToString(b[:])
	s, err := OpenPostgres(testDSN(), table)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkErr := s.Check(ctx)
	_, appendErr := s.Append(ctx, sample(1))
	for name, err := range map[string]error{"Check": checkErr, "Append": appendErr} {
		var nt *NoTableError
		if !errors.As(err, &nt) || !strings.Contains(err.Error(), "`warren audit init-db --table "+table+" --owner ROLE --operators ROLE`") {
			t.Fatalf("%s on a missing table = %v, want the refusal naming warren audit init-db", name, err)
		}
	}
	var exists bool
	if err := adminConn(t).QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil || exists {
		t.Fatalf("table %s exists: %v, %v", table, exists, err)
	}
}

// makeRoles creates NOLOGIN roles named prefix_NAME and drops them, and
// whatever they own, at cleanup.
func makeRoles(t *testing.T, admin *pgx.Conn, prefix string, names ...string) {
	t.Helper()
	ctx := context.Background()
	var idents []string
	for _, n := range names {
		idents = append(idents, pgx.Identifier{prefix + "_" + n}.Sanitize())
	}
	for _, id := range idents {
		if _, err := admin.Exec(ctx, "CREATE ROLE "+id+" NOLOGIN"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		all := strings.Join(idents, ", ")
		for _, q := range []string{"DROP OWNED BY " + all + " CASCADE", "DROP ROLE " + all} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
}

// init-db refuses operators who could rewrite the table anyway, and
// leaves nothing behind.
func TestInitDBRefusesOperatorsWhoCouldRewriteTheLog(t *testing.T) {
	ctx := context.Background()
	admin := adminConn(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "audit_test_" + hex.EncodeToString(b[:])
	makeRoles(t, admin, table, "owner", "ops")
	if _, err := admin.Exec(ctx, "GRANT "+pgx.Identifier{table + "_owner"}.Sanitize()+" TO "+pgx.Identifier{table + "_ops"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	var super string
	if err := admin.QueryRow(ctx, "SELECT current_user").Scan(&super); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, operators, want string
	}{
		{"a member of the owner's role", table + "_ops", "role " + table + "_ops could still UPDATE, DELETE, TRUNCATE " + table + " (it owns " + table + "): nothing was created"},
		{"a superuser", super, "role " + super + " could still UPDATE, DELETE, TRUNCATE " + table + " (a superuser): nothing was created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := InitDB(ctx, testDSN(), Schema{Table: table, Owner: table + "_owner", Operators: tt.operators})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("InitDB = %v, want a refusal saying %q", err, tt.want)
			}
			var exists bool
			if err := admin.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil || exists {
				t.Fatalf("table %s exists after the refusal: %v, %v", table, exists, err)
			}
		})
	}
}

// Grants name what lets a role rewrite the log, and why it holds it.
func TestGrantsNameWhatLetsARoleRewriteTheLog(t *testing.T) {
	ctx := context.Background()
	table, _ := pgTable(t)
	admin := adminConn(t)
	super, err := OpenPostgres(testDSN(), table)
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close()
	g, err := super.Grants(ctx)
	if err != nil || g.OK() || !strings.HasSuffix(g.String(), " can UPDATE, DELETE, TRUNCATE (a superuser): an operator could rewrite the log; see `warren audit init-db`") {
		t.Fatalf("a superuser's grants = %q, %v", g.String(), err)
	}
	if _, err := admin.Exec(ctx, "GRANT UPDATE, DELETE ON "+pgx.Identifier{table}.Sanitize()+" TO "+pgx.Identifier{table + "_ops"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	g, err = openPG(t, table).Grants(ctx)
	if want := "role " + table + "_ops can UPDATE, DELETE: an operator could rewrite the log; see `warren audit init-db`"; err != nil || g.String() != want {
		t.Fatalf("grants = %q, %v; want %q", g.String(), err, want)
	}
}

func TestSchemaRefusesRolesThatDefeatIt(t *testing.T) {
	tests := []struct {
		name string
		sc   Schema
		want string
	}{
		{"no operators", Schema{Table: DefaultTable, Owner: "audit_owner"}, "--operators: name the role"},
		{"operators who own it", Schema{Table: DefaultTable, Owner: "ops", Operators: "ops"}, "the operators must not own it"},
		{"a table name with SQL", Schema{Table: "a; DROP TABLE b", Operators: "ops"}, "table name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.sc.SQL(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SQL = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSchemaSQLGrantsInsertAndSelectOnly(t *testing.T) {
	sql, err := Schema{Table: "audit.log", Owner: "audit owner", Operators: "warren_ops"}.SQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"BEGIN;\nCREATE TABLE \"audit\".\"log\" (",
		"CREATE TRIGGER warren_no_update_delete BEFORE UPDATE OR DELETE ON \"audit\".\"log\" FOR EACH ROW EXECUTE FUNCTION \"audit\".\"log_no_edit\"();",
		"CREATE TRIGGER warren_no_truncate BEFORE TRUNCATE ON \"audit\".\"log\" FOR EACH STATEMENT",
		"ALTER TABLE \"audit\".\"log\" OWNER TO \"audit owner\";",
		"REVOKE ALL ON \"audit\".\"log\", \"audit\".\"log_schema\" FROM PUBLIC;",
		"GRANT USAGE ON SCHEMA \"audit\" TO \"warren_ops\";",
		"GRANT SELECT, INSERT ON \"audit\".\"log\" TO \"warren_ops\";",
		"GRANT SELECT ON \"audit\".\"log_schema\" TO \"warren_ops\";\nCOMMIT;\n",
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("the SQL lacks %q:\n%s", want, sql)
		}
	}
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(line, "GRANT") &&
			(strings.Contains(line, "UPDATE") || strings.Contains(line, "DELETE") || strings.Contains(line, "TRUNCATE") || strings.Contains(line, " ALL ")) {
			t.Errorf("the SQL grants more than INSERT and SELECT: %q", line)
		}
	}
}
