//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/ui/common"
)

const secretsTestDB = "postgres://postgres@127.0.0.1:5432/test"

// secretScene is a vhost whose own RabbitMQ user logs in with a
// distinctive password, thirty dead letters in orders.dlq, an inbox table
// and a team audit table, and distinctive passwords for every DSN.
type secretScene struct {
	vhost, user, dir  string
	password, wrong   string // the user's password, and one the broker refuses
	dsnPassword       string // in every PostgreSQL DSN (the local server trusts, so any works)
	inbox, auditTable string
}

func newSecretScene(t *testing.T) *secretScene {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tag := hex.EncodeToString(rnd[:])
	s := &secretScene{
		vhost: testkit.Vhost(t, "warren-cli-secrets"), user: "warren-secrets-" + tag, dir: t.TempDir(),
		password: "S3cr3t-w4rr3n-" + tag, wrong: "Wr0ng-w4rr3n-" + tag, dsnPassword: "Dsn-P4ss-" + tag,
		inbox: "warren_secrets_inbox_" + tag, auditTable: "warren_secrets_audit_" + tag,
	}
	testkit.Mgmt(t, http.MethodPut, "/api/users/"+s.user, fmt.Sprintf(`{"password":%q,"tags":"administrator"}`, s.password))
	t.Cleanup(func() { testkit.Mgmt(t, http.MethodDelete, "/api/users/"+s.user, "") })
	testkit.Mgmt(t, http.MethodPut, "/api/permissions/"+url.PathEscape(s.vhost)+"/"+s.user, `{"configure":".*","write":".*","read":".*"}`)
	ch := vhostChannel(t, s.vhost)
	if _, err := ch.QueueDeclare("orders.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]amqp.Publishing, 30)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("sec-%d", i), Headers: amqp.Table{"event_id": fmt.Sprintf("sec-%d", i)}, Body: []byte(`{"ok":true}`)}
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", msgs)
	secretsSQL(t, fmt.Sprintf("CREATE TABLE %s (event_id text PRIMARY KEY, processed_at timestamptz NOT NULL DEFAULT now())", s.inbox))
	secretsSQL(t, fmt.Sprintf("INSERT INTO %s (event_id) VALUES ('sec-1')", s.inbox))
	// The team audit table, as an administrator makes it with `warren
	// audit init-db`: the operators' role may INSERT and SELECT only.
	secretsSQL(t, fmt.Sprintf("CREATE ROLE %s LOGIN", s.auditOps()))
	sql, err := audit.Schema{Table: s.auditTable, Operators: s.auditOps()}.SQL()
	if err != nil {
		t.Fatal(err)
	}
	secretsSQL(t, sql)
	t.Cleanup(func() {
		secretsSQL(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s, %s_schema", s.inbox, s.auditTable, s.auditTable))
		secretsSQL(t, fmt.Sprintf("DROP FUNCTION IF EXISTS %s_no_edit()", s.auditTable))
		secretsSQL(t, fmt.Sprintf("DROP OWNED BY %s", s.auditOps()))
		secretsSQL(t, fmt.Sprintf("DROP ROLE %s", s.auditOps()))
	})
	return s
}

// auditOps is the role the operators' warren connects to the team audit
// table as.
func (s *secretScene) auditOps() string { return s.auditTable + "_ops" }

// auditDSN is a DSN of the operators' role, with the distinctive
// password, for host:port.
func (s *secretScene) auditDSN(hostPort string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/test?sslmode=disable", s.auditOps(), s.dsnPassword, hostPort)
}

func secretsSQL(t *testing.T, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, secretsTestDB)
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432 unreachable: %v", err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// secrets are what must never be printed: each password, and the Basic
// authorization the broker password would travel in.
func (s *secretScene) secrets() []string {
	basic := func(pw string) string { return base64.StdEncoding.EncodeToString([]byte(s.user + ":" + pw)) }
	return []string{s.password, s.wrong, s.dsnPassword, basic(s.password), basic(s.wrong)}
}

// dsn is a DSN with the distinctive password for host:port.
func (s *secretScene) dsn(hostPort string) string {
	return fmt.Sprintf("postgres://postgres:%s@%s/test?sslmode=disable", s.dsnPassword, hostPort)
}

// secretSetup is one way to configure (and break) a context.
type secretSetup struct {
	name      string
	amqpURL   string
	mgmtURL   string
	password  string // the value of the password variable
	inboxDSN  string // "" for no inbox
	auditDSN  string // "" for a file audit store
	succeeds  bool   // every command but lint and config check must succeed
	extraKeys string
}

// config writes the setup's config and sets its variables.
func (s *secretScene) config(t *testing.T, i int, su secretSetup) string {
	t.Helper()
	env := func(kind string) string { return fmt.Sprintf("WARREN_SECRETS_%s_%d", kind, i) }
	t.Setenv(env("PW"), su.password)
	audit := fmt.Sprintf("file:%s", filepath.Join(s.dir, fmt.Sprintf("audit-%d.jsonl", i)))
	if su.auditDSN != "" {
		audit = "postgres:" + s.auditTable
		t.Setenv(env("AUDIT"), su.auditDSN)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "current_context = \"s\"\n[contexts.s]\namqp_url = %q\nmanagement_url = %q\nusername = %q\npassword_env = %q\n",
		su.amqpURL, su.mgmtURL, s.user, env("PW"))
	fmt.Fprintf(&b, "vhost = %q\naudit = %q\naudit_dsn_env = %q\n%s", s.vhost, audit, env("AUDIT"), su.extraKeys)
	fmt.Fprintf(&b, "[[contexts.s.queues]]\nname = \"orders\"\ndlq = \"orders.dlq\"\nlogical_id = \"header:event_id\"\n")
	if su.inboxDSN != "" {
		t.Setenv(env("INBOX"), su.inboxDSN)
		fmt.Fprintf(&b, "inbox = { dsn_env = %q, table = %q, id_column = \"event_id\", time_column = \"processed_at\" }\n", env("INBOX"), s.inbox)
	}
	path := filepath.Join(s.dir, fmt.Sprintf("warren-%d.toml", i))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noSecret fails when text holds any secret.
func (s *secretScene) noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, secret := range s.secrets() {
		if i := strings.Index(text, secret); i >= 0 {
			t.Errorf("%s shows a secret: …%s…", where, text[max(0, i-60):min(len(text), i+len(secret)+20)])
		}
	}
}

// everyCommand is each command an operator runs, reading and changing.
var everyCommand = [][]string{
	{"config", "check"},
	{"status"}, {"status", "--json"}, {"lint"},
	{"dlq", "ls", "orders.dlq"}, {"dlq", "ls", "orders.dlq", "--json"},
	{"dlq", "show", "orders.dlq", "--id", "sec-29"}, {"dlq", "show", "orders.dlq", "--id", "sec-29", "--json"},
	{"dlq", "stats", "orders.dlq"}, {"dlq", "stats", "orders.dlq", "--json"},
	{"dlq", "replay", "orders.dlq", "--dry-run"},
	{"dlq", "replay", "orders.dlq", "--yes", "--json", "--limit", "1", "--include-applied"},
	{"dlq", "quarantine", "orders.dlq", "--yes", "--reason", "r", "--limit", "1"},
	{"audit", "export"}, {"audit", "export", "--format", "csv"}, {"audit", "verify"}, {"audit", "tail"},
}

// runEverything runs every command with --debug FILE and checks stdout,
// stderr, the error and the debug file.
func (s *secretScene) runEverything(t *testing.T, cfg string, su secretSetup) {
	t.Helper()
	debug := filepath.Join(s.dir, "debug-"+strings.ReplaceAll(su.name, " ", "-")+".log")
	for _, args := range everyCommand {
		r := execCLI(t, append([]string{"--config", cfg, "--debug", debug}, args...)...)
		what := fmt.Sprintf("%s: warren %s", su.name, strings.Join(args, " "))
		s.noSecret(t, what+" stdout", r.out)
		s.noSecret(t, what+" stderr", r.errOut)
		// lint exits 1 on findings; config check is held to its own test.
		if su.succeeds && r.err != nil && args[0] != "lint" && args[0] != "config" {
			t.Errorf("%s failed: %v\n%s%s", what, r.err, r.out, r.errOut)
		}
	}
	if b, err := os.ReadFile(debug); err == nil {
		s.noSecret(t, su.name+": the --debug file", string(b))
	}
}

func TestSecretsNeverAppearInOutputErrorsDebugOrAudit(t *testing.T) {
	s := newSecretScene(t)
	amqpOK, mgmtOK := testAMQP, testMgmt
	const down = "127.0.0.1:1"
	setups := []secretSetup{
		{name: "working, file audit", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, inboxDSN: s.dsn("127.0.0.1:5432"), succeeds: true},
		{name: "working, team audit", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, inboxDSN: s.dsn("127.0.0.1:5432"), auditDSN: s.auditDSN("127.0.0.1:5432"), succeeds: true},
		{name: "wrong password", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.wrong, inboxDSN: s.dsn("127.0.0.1:5432")},
		{name: "broker port down", amqpURL: "amqp://" + down + "/", mgmtURL: mgmtOK, password: s.password},
		{name: "management port down", amqpURL: amqpOK, mgmtURL: "http://" + down, password: s.password},
		{name: "inbox unreachable", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, inboxDSN: s.dsn(down)},
		{name: "inbox key=value DSN unreachable", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password,
			inboxDSN: "host=127.0.0.1 port=1 user=postgres dbname=test password=" + s.dsnPassword},
		{name: "inbox DSN malformed", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, inboxDSN: s.dsn("127.0.0.1:notaport")},
		{name: "team audit unreachable", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, auditDSN: s.dsn(down)},
		{name: "team audit DSN malformed", amqpURL: amqpOK, mgmtURL: mgmtOK, password: s.password, auditDSN: s.dsn("127.0.0.1:notaport")},
		{name: "password inline in amqp_url", amqpURL: "amqp://" + s.user + ":" + s.password + "@" + testAMQPHost + "/", mgmtURL: mgmtOK, password: s.password},
	}
	for i, su := range setups {
		s.runEverything(t, s.config(t, i, su), su)
	}
	for i := range setups {
		if b, err := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("audit-%d.jsonl", i))); err == nil {
			s.noSecret(t, setups[i].name+": the audit file", string(b))
		}
	}
	s.noSecret(t, "the team audit table", s.auditRows(t))
	if got := ready(t, s.vhost, "orders.dlq"); got >= 30 {
		t.Errorf("no replay or quarantine succeeded (%d dead letters left): the successful paths went unchecked", got)
	}
}

// auditRows is every stored line of the team audit table; the working
// setup must have written some.
func (s *secretScene) auditRows(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, secretsTestDB)
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432 unreachable: %v", err)
	}
	defer db.Close(ctx)
	rows, err := db.Query(ctx, "SELECT record FROM "+s.auditTable+" ORDER BY seq")
	if err != nil {
		t.Fatalf("read the team audit table: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(lines) == 0 {
		t.Fatalf("the team audit table holds %d records (%v); the working setup wrote none", len(lines), err)
	}
	return strings.Join(lines, "\n")
}

func TestConfigCheckNeverPrintsCredentialsInTheManagementURL(t *testing.T) {
	s := newSecretScene(t)
	su := secretSetup{name: "password inline in management_url", amqpURL: testAMQP,
		mgmtURL: "http://" + s.user + ":" + s.password + "@" + testMgmtHost, password: s.password}
	s.runEverything(t, s.config(t, 0, su), su)
}

// The user of the scene may use its vhost only, like an operator scoped
// to one team's vhost; config check must try the context's vhost.
func TestConfigCheckConnectsToTheContextsVhost(t *testing.T) {
	s := newSecretScene(t)
	su := secretSetup{name: "scoped user", amqpURL: testAMQP, mgmtURL: testMgmt, password: s.password}
	r := execCLI(t, "--config", s.config(t, 0, su), "config", "check")
	if r.err != nil {
		t.Errorf("config check of a context whose user may use only vhost %s: %v\n%s", s.vhost, r.err, r.out)
	}
}

// debugLog is the --debug writer of a running dashboard.
type debugLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (d *debugLog) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.b.Write(p)
}

func (d *debugLog) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.b.String()
}

// waitLogged waits until the dashboard handled a message of type name.
func (d *debugLog) waitLogged(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(d.String(), name) {
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard never handled a %s; debug log:\n%s", name, d.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSecretsNeverReachTheDashboardOrItsDebugLog(t *testing.T) {
	s := newSecretScene(t)
	setups := []secretSetup{
		{name: "working broker, unreachable inbox and team audit", amqpURL: testAMQP, mgmtURL: testMgmt,
			password: s.password, inboxDSN: s.dsn("127.0.0.1:1"), auditDSN: s.dsn("127.0.0.1:1")},
		{name: "wrong password", amqpURL: testAMQP, mgmtURL: testMgmt, password: s.wrong,
			inboxDSN: s.dsn("127.0.0.1:5432"), auditDSN: s.dsn("127.0.0.1:5432")},
	}
	for i, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			a := &App{ConfigPath: s.config(t, i, su), In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
			var debug debugLog
			tm := teatest.NewTestModel(t, tuiModel(t, a, &debug), teatest.WithInitialTermSize(140, 40))
			var screen screenLog
			debug.waitLogged(t, "overview.snapshotMsg")
			tm.Send(common.OpenDLQMsg{Queue: domain.QueueRef{Vhost: s.vhost, Name: "orders.dlq"}})
			screen.waitScreen(t, tm, "DLQ orders.dlq")
			debug.waitLogged(t, "deadletters.openedMsg")
			if i == 0 {
				debug.waitLogged(t, "deadletters.inboxMsg")
			}
			tm.Send(common.OpenAuditMsg{})
			screen.waitScreen(t, tm, "audit log")
			debug.waitLogged(t, "auditlog.operationsMsg")
			tm.Type("q")
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			rest, _ := io.ReadAll(tm.FinalOutput(t))
			screen.Write(rest)
			s.noSecret(t, "the dashboard", screen.String())
			s.noSecret(t, "the --debug log", debug.String())
		})
	}
}
