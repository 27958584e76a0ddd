//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warrenops/warren/audit"
)

// command runs an administration command and fails the test when it fails.
func command(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// setPolicy applies a policy to the work queue.
func (s *scene) setPolicy(t *testing.T, definition string) {
	t.Helper()
	body := fmt.Sprintf(`{"pattern":"^%s$","apply-to":"queues","priority":10,"definition":%s}`, workQueue, definition)
	s.b.mgmt(t, http.MethodPut, "/api/policies/"+url.PathEscape(s.vhost)+"/faults", body)
}

func (s *scene) clearPolicy(t *testing.T) {
	t.Helper()
	s.b.mgmt(t, http.MethodDelete, "/api/policies/"+url.PathEscape(s.vhost)+"/faults", "")
}

// pgCluster is the local PostgreSQL cluster's version directory.
func pgCluster(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no PostgreSQL cluster under /etc/postgresql: %v", err)
	}
	return entries[0].Name()
}

// stopPostgres stops the cluster; the cleanup starts it again.
func stopPostgres(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { startPostgres(t) })
	command(t, "pg_ctlcluster", "--skip-systemctl-redirect", pgCluster(t), "main", "stop")
}

// startPostgres starts the cluster unless it runs, and waits for it.
func startPostgres(t *testing.T) {
	t.Helper()
	if pgUp() {
		return
	}
	command(t, "pg_ctlcluster", "--skip-systemctl-redirect", pgCluster(t), "main", "start")
	deadline := time.Now().Add(time.Minute)
	for !pgUp() {
		if time.Now().After(deadline) {
			t.Fatal("PostgreSQL did not come back within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pgUp() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx) == nil
}

// pgExec runs statements on the test database.
func pgExec(t *testing.T, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432 unreachable: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// inboxTable creates work's inbox with every tenth logical ID applied,
// and drops it at the end.
func inboxTable(t *testing.T, name string) {
	t.Helper()
	pgExec(t, fmt.Sprintf("CREATE TABLE %s (event_id text PRIMARY KEY, processed_at timestamptz NOT NULL DEFAULT now())", name))
	t.Cleanup(func() { pgExec(t, "DROP TABLE IF EXISTS "+name) })
	ids := make([]string, 0, messages/10)
	for i := 0; i < messages; i += 10 {
		ids = append(ids, logicalID(i))
	}
	pgExec(t, fmt.Sprintf("INSERT INTO %s (event_id) SELECT unnest($1::text[])", name), ids)
}

// initAuditTable makes a team audit store's table as `warren audit
// init-db` does, with INSERT and SELECT granted to the role table_ops,
// which warren connects as (auditRole), and removes both at the end.
func initAuditTable(t *testing.T, table string) {
	t.Helper()
	ops := pgx.Identifier{auditRole(table)}.Sanitize()
	pgExec(t, "CREATE ROLE "+ops+" LOGIN")
	t.Cleanup(func() {
		pgExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s_schema", table, table))
		pgExec(t, fmt.Sprintf("DROP FUNCTION IF EXISTS %s_no_edit()", table))
		pgExec(t, "DROP OWNED BY "+ops)
		pgExec(t, "DROP ROLE "+ops)
	})
	stmts, err := audit.Schema{Table: table, Operators: auditRole(table)}.Statements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		pgExec(t, q)
	}
}

// auditRole is the role warren connects to the team audit table as.
func auditRole(table string) string { return table + "_ops" }

// freezeFile makes path unwritable even for root (the immutable flag),
// or by its mode for anyone else; the returned function undoes it and is
// also registered as a cleanup.
func freezeFile(t *testing.T, path string) func() {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("audit file: %v", err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		undo := func() { _ = os.Chmod(path, 0o600) }
		t.Cleanup(undo)
		return undo
	}
	command(t, "chattr", "+i", path)
	undo := func() { _ = exec.Command("chattr", "-i", path).Run() }
	t.Cleanup(undo)
	return undo
}

func auditFile(c *config) string {
	return filepath.Clean(strings.TrimPrefix(c.auditSpec, "file:"))
}

// waitPolicy waits until the work queue runs under the faults policy.
func (s *scene) waitPolicy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct {
			Policy string `json:"policy"`
		}
		body := s.b.mgmt(t, http.MethodGet, "/api/queues/"+url.PathEscape(s.vhost)+"/"+workQueue, "")
		if err := json.Unmarshal([]byte(body), &q); err != nil {
			t.Fatal(err)
		}
		if q.Policy == "faults" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the faults policy did not reach %s", workQueue)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
