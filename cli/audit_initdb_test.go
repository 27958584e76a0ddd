//go:build integration

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
)

// The team audit table comes from `audit init-db`, never from warren's
// first use: init-db prints the SQL, --apply runs it as the DSN's role,
// and config check then says what the connecting role may do to it.
func TestAuditInitDBMakesATableOperatorsCanOnlyAppendTo(t *testing.T) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	table := "warren_initdb_" + hex.EncodeToString(b[:])
	owner, ops := table+"_owner", table+"_ops"
	secretsSQL(t, fmt.Sprintf("CREATE ROLE %s NOLOGIN", owner))
	secretsSQL(t, fmt.Sprintf("CREATE ROLE %s LOGIN", ops))
	t.Cleanup(func() {
		secretsSQL(t, fmt.Sprintf("DROP OWNED BY %s, %s CASCADE", owner, ops))
		secretsSQL(t, fmt.Sprintf("DROP ROLE %s, %s", owner, ops))
	})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warren.toml")
	const dsnEnv = "WARREN_INITDB_TEST_DSN"
	// Port 1 for the broker: its checks fail at once, and the audit
	// store's lines do not depend on them.
	text := fmt.Sprintf("current_context = \"t\"\n[contexts.t]\namqp_url = \"amqp://127.0.0.1:1/\"\nmanagement_url = \"http://127.0.0.1:1\"\nmetrics_url = \"off\"\naudit = \"postgres:%s\"\naudit_dsn_env = %q\n", table, dsnEnv)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	operator := "postgres://" + ops + "@127.0.0.1:5432/test?sslmode=disable"
	t.Setenv(dsnEnv, admin)

	r := execCLI(t, "--config", cfg, "audit", "init-db", "--owner", owner, "--operators", ops)
	for _, want := range []string{
		fmt.Sprintf("CREATE TABLE %q (", table),
		fmt.Sprintf("ALTER TABLE %q OWNER TO %q;", table, owner),
		fmt.Sprintf("GRANT SELECT, INSERT ON %q TO %q;", table, ops),
		"BEFORE UPDATE OR DELETE ON", "BEFORE TRUNCATE ON",
	} {
		if r.err != nil || !strings.Contains(r.out, want) {
			t.Fatalf("init-db printed (%v):\n%s\nwant %q", r.err, r.out, want)
		}
	}

	r = execCLI(t, "--config", cfg, "config", "check")
	if want := fmt.Sprintf("audit store            FAIL  audit: postgres table %s on 127.0.0.1:5432/test (check): the table %s (or %s_schema) does not exist, and warren does not create it", table, table, table); !strings.Contains(r.out, want) ||
		!strings.Contains(r.out, "`warren audit init-db --table "+table+" --owner ROLE --operators ROLE`") || strings.Contains(r.out, "audit grants") {
		t.Fatalf("config check before init-db --apply:\n%s\nwant %q naming init-db, and no grants line", r.out, want)
	}
	if r.err == nil || !regexp.MustCompile(`^\d+ checks? failed: (.+, )?audit store$`).MatchString(r.err.Error()) {
		t.Errorf("config check ends with %v, want the failed check named", r.err)
	}

	r = execCLI(t, "--config", cfg, "audit", "init-db", "--owner", owner, "--operators", ops, "--apply")
	want := fmt.Sprintf("created %s and %s_schema, owned by %s, with the append-only trigger\naudit grants           ok    role %s: INSERT, SELECT only\n", table, table, owner, ops)
	if r.err != nil || r.out != want {
		t.Fatalf("init-db --apply: %v\n%s%s\nwant %q", r.err, r.out, r.errOut, want)
	}
	r = execCLI(t, "--config", cfg, "audit", "init-db", "--owner", owner, "--operators", ops, "--apply")
	if app.ExitCode(r.err) != app.ExitFailure || !strings.Contains(r.err.Error(), "already exists") {
		t.Fatalf("a second init-db --apply: %v, want exit 1 saying the table exists", r.err)
	}

	t.Setenv(dsnEnv, operator)
	r = execCLI(t, "--config", cfg, "config", "check")
	if !strings.Contains(r.out, "audit store            ok    postgres table "+table) ||
		!strings.Contains(r.out, fmt.Sprintf("audit grants           ok    role %s: INSERT, SELECT only\n", ops)) {
		t.Fatalf("config check as the operators:\n%s", r.out)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "tail"}, {"audit", "export"}} {
		if r := execCLI(t, append([]string{"--config", cfg}, args...)...); r.err != nil {
			t.Fatalf("%s as the operators: %v\n%s", strings.Join(args, " "), r.err, r.errOut)
		}
	}

	t.Setenv(dsnEnv, admin)
	r = execCLI(t, "--config", cfg, "config", "check")
	if want := "audit grants           warn  role postgres can UPDATE, DELETE, TRUNCATE (a superuser): an operator could rewrite the log; see `warren audit init-db`\n"; !strings.Contains(r.out, want) {
		t.Fatalf("config check as a superuser:\n%s\nwant %q", r.out, want)
	}
}

func TestAuditInitDBRefusesRolesThatDefeatIt(t *testing.T) {
	for _, args := range [][]string{
		{"audit", "init-db"},
		{"audit", "init-db", "--owner", "ops", "--operators", "ops"},
		{"audit", "init-db", "--operators", "ops", "--table", "x; DROP TABLE y"},
	} {
		r := execCLI(t, args...)
		if app.ExitCode(r.err) != app.ExitUsage || r.out != "" {
			t.Errorf("warren %s: exit %d, printed %q; want exit 2 and nothing printed", strings.Join(args, " "), app.ExitCode(r.err), r.out)
		}
	}
}
