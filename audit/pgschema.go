package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// The team store's table is created by an administrator, never by warren
// (`warren audit init-db`): the role that creates a table owns it, and an
// owner can UPDATE, DELETE and TRUNCATE it whatever the grants say, so a
// table made by the first operator's warren would be a log that operator
// could rewrite. The schema gives the table to a role the operators are
// not, grants the operators INSERT and SELECT only, and adds a trigger
// that refuses UPDATE, DELETE and TRUNCATE to everyone, its owner too,
// until an administrator drops it.

// Schema is the team store's layout as an administrator creates it.
type Schema struct {
	Table     string // as the config names it: TABLE or SCHEMA.TABLE
	Owner     string // the role that owns it; "" leaves it to the role that runs the SQL
	Operators string // the role whose members run warren
}

// maxRoleName is PostgreSQL's longest identifier, in bytes.
const maxRoleName = 63

func (sc Schema) check() error {
	if !tableName.MatchString(sc.Table) {
		return fmt.Errorf("table name %q: want letters, digits and underscores, optionally schema.table", sc.Table)
	}
	for _, r := range []struct{ flag, name string }{{"--owner", sc.Owner}, {"--operators", sc.Operators}} {
		if len(r.name) > maxRoleName || strings.ContainsFunc(r.name, unicode.IsControl) {
			return fmt.Errorf("%s %q: a role name is at most %d bytes, without control characters", r.flag, r.name, maxRoleName)
		}
	}
	switch {
	case sc.Operators == "":
		return errors.New("--operators: name the role your operators' warren connects as (a group role they are members of)")
	case sc.Owner == sc.Operators:
		return fmt.Errorf("--owner and --operators are both %q: the owner of a table can UPDATE and DELETE it, so the operators must not own it", sc.Owner)
	}
	return nil
}

// idents are the schema's names, quoted for SQL.
type idents struct {
	table, version, fn, owner, operators, schema string
}

func (sc Schema) idents() idents {
	parts := strings.Split(sc.Table, ".")
	table := pgx.Identifier(parts)
	version := append(pgx.Identifier{}, table...)
	version[len(version)-1] += "_schema"
	fn := append(pgx.Identifier{}, table...)
	fn[len(fn)-1] += "_no_edit"
	id := idents{table: table.Sanitize(), version: version.Sanitize(), fn: fn.Sanitize(),
		operators: pgx.Identifier{sc.Operators}.Sanitize()}
	if sc.Owner != "" {
		id.owner = pgx.Identifier{sc.Owner}.Sanitize()
	}
	if len(parts) == 2 {
		id.schema = pgx.Identifier{parts[0]}.Sanitize()
	}
	return id
}

// Statements are the schema's SQL, in the order they run, one statement
// each.
func (sc Schema) Statements() ([]string, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	id := sc.idents()
	stmts := []string{
		`CREATE TABLE ` + id.table + ` (
    seq bigint PRIMARY KEY,
    time timestamptz NOT NULL,
    operation text NOT NULL,
    outcome text NOT NULL,
    hash text NOT NULL,
    record text NOT NULL
)`,
		`CREATE TABLE ` + id.version + ` (version integer NOT NULL)`,
		fmt.Sprintf(`INSERT INTO %s (version) VALUES (%d)`, id.version, schemaVersion),
		`CREATE FUNCTION ` + id.fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the warren audit log %.% is append-only: % refused', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP;
END
$$`,
		`CREATE TRIGGER warren_no_update_delete BEFORE UPDATE OR DELETE ON ` + id.table + ` FOR EACH ROW EXECUTE FUNCTION ` + id.fn + `()`,
		`CREATE TRIGGER warren_no_truncate BEFORE TRUNCATE ON ` + id.table + ` FOR EACH STATEMENT EXECUTE FUNCTION ` + id.fn + `()`,
	}
	if id.owner != "" {
		stmts = append(stmts,
			`ALTER TABLE `+id.table+` OWNER TO `+id.owner,
			`ALTER TABLE `+id.version+` OWNER TO `+id.owner,
			`ALTER FUNCTION `+id.fn+`() OWNER TO `+id.owner)
	}
	stmts = append(stmts, `REVOKE ALL ON `+id.table+`, `+id.version+` FROM PUBLIC`)
	if id.schema != "" {
		stmts = append(stmts, `GRANT USAGE ON SCHEMA `+id.schema+` TO `+id.operators)
	}
	return append(stmts,
		`GRANT SELECT, INSERT ON `+id.table+` TO `+id.operators,
		`GRANT SELECT ON `+id.version+` TO `+id.operators), nil
}

// SQL is the schema as a script an administrator reads and runs (psql
// -1 -f), commented.
func (sc Schema) SQL() (string, error) {
	stmts, err := sc.Statements()
	if err != nil {
		return "", err
	}
	owner := sc.Owner
	if owner == "" {
		owner = "the role that runs this script"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- warren's team audit store: %s, owned by %s; role %s may INSERT and SELECT only.\n", sc.Table, owner, sc.Operators)
	b.WriteString("-- A trigger refuses UPDATE, DELETE and TRUNCATE. seq is warren's own numbering: no sequence to grant.\n")
	b.WriteString("-- Run it as a role that can create the table and SET ROLE to its owner, in one transaction.\n")
	b.WriteString("BEGIN;\n")
	for _, s := range stmts {
		b.WriteString(s)
		b.WriteString(";\n")
	}
	b.WriteString("COMMIT;\n")
	return b.String(), nil
}

// InitDB creates the schema on the database dsn names, as the role the
// DSN connects as, in one transaction. It refuses, and leaves nothing
// behind, when the operators' role could still UPDATE, DELETE or
// TRUNCATE the table (a superuser, or a member of the owner's role).
// It returns the operators' grants as created.
func InitDB(ctx context.Context, dsn string, sc Schema) (Grants, error) {
	stmts, err := sc.Statements()
	if err != nil {
		return Grants{}, err
	}
	s, err := OpenPostgres(dsn, sc.Table)
	if err != nil {
		return Grants{}, err
	}
	defer s.Close()
	var g Grants
	err = s.connected(ctx, "create the table", func(c *pgx.Conn) error {
		return pgx.BeginTxFunc(ctx, c, pgx.TxOptions{}, func(tx pgx.Tx) error {
			for _, q := range stmts {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			if g, err = grantsOf(ctx, tx, sc.Operators, s.table, sc.Table); err != nil {
				return err
			}
			if !g.OK() {
				return fmt.Errorf("role %s could still %s %s%s: nothing was created; give --operators a role that is no superuser and no member of the owner's role",
					g.Role, strings.Join(g.Rewrite(), ", "), sc.Table, g.why())
			}
			return nil
		})
	})
	return g, err
}

// Grants is what a role may do to the audit table.
type Grants struct {
	Role      string
	Table     string
	Superuser bool
	Owner     bool // the role owns the table, or is a member of its owner
	Held      []string
}

// rewriting are the privileges that let a role change what the log says.
var rewriting = []string{"UPDATE", "DELETE", "TRUNCATE"}

// Rewrite lists the privileges held that let the role change the log.
func (g Grants) Rewrite() []string {
	var out []string
	for _, p := range g.Held {
		for _, r := range rewriting {
			if p == r {
				out = append(out, p)
			}
		}
	}
	return out
}

// OK says the role may add and read records and do nothing else to them.
func (g Grants) OK() bool { return len(g.Rewrite()) == 0 }

// String is the grants in words, e.g. "role ana: INSERT, SELECT only"
// or "role ana can UPDATE, DELETE, TRUNCATE (it owns warren_audit): an
// operator could rewrite the log; see `warren audit init-db`".
func (g Grants) String() string {
	if g.OK() {
		if len(g.Held) == 0 {
			return fmt.Sprintf("role %s: no privilege on %s", g.Role, g.Table)
		}
		return fmt.Sprintf("role %s: %s only", g.Role, strings.Join(g.Held, ", "))
	}
	return fmt.Sprintf("role %s can %s%s: an operator could rewrite the log; see `warren audit init-db`", g.Role, strings.Join(g.Rewrite(), ", "), g.why())
}

// why says how a role came by privileges no grant gave it.
func (g Grants) why() string {
	switch {
	case g.Superuser: // pg_has_role holds for a superuser too
		return " (a superuser)"
	case g.Owner:
		return " (it owns " + g.Table + ")"
	}
	return ""
}

// Grants says what the role the store connects as may do to its table.
func (s *PGStore) Grants(ctx context.Context) (Grants, error) {
	var g Grants
	err := s.with(ctx, "read grants", func(c *pgx.Conn) error {
		var err error
		g, err = grantsOf(ctx, c, "", s.table, s.name)
		return err
	})
	return g, err
}

// grantsOf reads what role ("" for the session's own) may do to table
// (sanitised; name as the config names it), with has_table_privilege,
// which counts what the role holds through its memberships and as owner
// or superuser.
func grantsOf(ctx context.Context, q querier, role, table, name string) (Grants, error) {
	const sql = `SELECT r.rolname, r.rolsuper, pg_has_role(r.oid, c.relowner, 'USAGE'),
	has_table_privilege(r.oid, c.oid, 'INSERT'), has_table_privilege(r.oid, c.oid, 'SELECT'),
	has_table_privilege(r.oid, c.oid, 'UPDATE'), has_table_privilege(r.oid, c.oid, 'DELETE'),
	has_table_privilege(r.oid, c.oid, 'TRUNCATE')
FROM pg_class c, pg_roles r
WHERE c.oid = to_regclass($1) AND r.rolname = coalesce(nullif($2, ''), current_user)`
	var g Grants
	var priv [5]bool
	err := q.QueryRow(ctx, sql, table, role).Scan(&g.Role, &g.Superuser, &g.Owner, &priv[0], &priv[1], &priv[2], &priv[3], &priv[4])
	if errors.Is(err, pgx.ErrNoRows) {
		return Grants{}, fmt.Errorf("no table %s, or no role %q", name, role)
	}
	if err != nil {
		return Grants{}, err
	}
	g.Table = name
	for i, p := range []string{"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE"} {
		if priv[i] {
			g.Held = append(g.Held, p)
		}
	}
	return g, nil
}
