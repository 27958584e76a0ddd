//go:build faults

package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// warrenBin is the binary under test, built once by TestMain.
var warrenBin string

const (
	passwordEnv = "WARREN_FAULTS_PASSWORD"
	auditDSNEnv = "WARREN_FAULTS_AUDIT_DSN"
	inboxDSNEnv = "WARREN_FAULTS_INBOX_DSN"
	// pgDSN reaches the test database; the local server trusts it.
	pgDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// buildWarren builds the module's main package into dir.
func buildWarren(dir string) (string, error) {
	bin := filepath.Join(dir, "warren")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/warrenops/warren")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// setup is how one fault configures warren.
type setup struct {
	// audit is the store spec: "" for a file in the run's directory.
	audit string
	// inboxTable, when set, is work's inbox in the test database.
	inboxTable string
	// firstNode is the node of a cluster warren's config names first
	// (an index into broker.nodes); the others are its fallbacks.
	firstNode int
}

// config is one warren config file and the audit store it names.
type config struct {
	path      string
	auditSpec string
	auditDSN  string
}

func writeConfig(t *testing.T, s *scene, su setup) *config {
	t.Helper()
	dir := t.TempDir()
	c := &config{path: filepath.Join(dir, "warren.toml"), auditSpec: su.audit}
	if c.auditSpec == "" {
		c.auditSpec = "file:" + filepath.Join(dir, "audit.jsonl")
	} else {
		_, table, _ := strings.Cut(su.audit, ":")
		c.auditDSN = "postgres://" + auditRole(table) + "@127.0.0.1:5432/test?sslmode=disable"
	}
	// On a cluster warren names one node first and the others as its
	// fallbacks, as an operator's config of a cluster does.
	first := s.b.nodes[su.firstNode]
	amqpURL, mgmtURL := fmt.Sprintf("amqp://127.0.0.1:%d/", first.amqpPort), fmt.Sprintf("http://127.0.0.1:%d", first.mgmtPort)
	var fallbacks string
	if len(s.b.nodes) > 1 {
		var amqpURLs, mgmtURLs []string
		for i, n := range s.b.nodes {
			if i != su.firstNode {
				amqpURLs = append(amqpURLs, strconv.Quote(fmt.Sprintf("amqp://127.0.0.1:%d/", n.amqpPort)))
				mgmtURLs = append(mgmtURLs, strconv.Quote(fmt.Sprintf("http://127.0.0.1:%d", n.mgmtPort)))
			}
		}
		fallbacks = fmt.Sprintf("fallback_amqp_urls = [%s]\nfallback_management_urls = [%s]\n", strings.Join(amqpURLs, ", "), strings.Join(mgmtURLs, ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `current_context = "faults"

[contexts.faults]
amqp_url = %q
management_url = %q
%susername = "guest"
password_env = %q
vhost = %q
operator = "faults"
audit = %q
audit_dsn_env = %q

[[contexts.faults.queues]]
name = %q
dlq = %q
logical_id = "header:%s"
`, amqpURL, mgmtURL, fallbacks, passwordEnv, s.vhost, c.auditSpec, auditDSNEnv, workQueue, dlqQueue, idHeader)
	if su.inboxTable != "" {
		fmt.Fprintf(&b, "inbox = { dsn_env = %q, table = %q, id_column = \"event_id\", time_column = \"processed_at\" }\n", inboxDSNEnv, su.inboxTable)
	}
	if err := os.WriteFile(c.path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// child is one warren process.
type child struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
	killed bool
}

// start runs warren with the config and args; the secrets come from the
// environment, as in production.
func start(t *testing.T, c *config, args ...string) *child {
	t.Helper()
	ch := &child{done: make(chan struct{})}
	ch.cmd = exec.Command(warrenBin, append([]string{"--config", c.path}, args...)...)
	ch.cmd.Env = append(os.Environ(), passwordEnv+"=guest", auditDSNEnv+"="+c.auditDSN, inboxDSNEnv+"="+pgDSN)
	ch.cmd.Stdout, ch.cmd.Stderr = &ch.stdout, &ch.stderr
	if err := ch.cmd.Start(); err != nil {
		t.Fatalf("start warren: %v", err)
	}
	go func() {
		ch.err = ch.cmd.Wait()
		close(ch.done)
	}()
	t.Cleanup(func() {
		select {
		case <-ch.done:
		default:
			_ = ch.cmd.Process.Kill()
			<-ch.done
		}
	})
	return ch
}

// run is start and wait.
func run(t *testing.T, c *config, args ...string) *child {
	t.Helper()
	ch := start(t, c, args...)
	ch.wait(t, 3*time.Minute)
	return ch
}

func (ch *child) running() bool {
	select {
	case <-ch.done:
		return false
	default:
		return true
	}
}

func (ch *child) kill(t *testing.T) {
	t.Helper()
	if err := ch.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("SIGKILL warren: %v", err)
	}
	ch.killed = true
}

func (ch *child) wait(t *testing.T, limit time.Duration) {
	t.Helper()
	select {
	case <-ch.done:
	case <-time.After(limit):
		_ = ch.cmd.Process.Kill()
		<-ch.done
		t.Fatalf("warren %s did not finish within %s; stderr:\n%s", strings.Join(ch.cmd.Args[1:], " "), limit, ch.stderr.String())
	}
}

// code is the exit code, -1 when killed by a signal.
func (ch *child) code() int {
	var ee *exec.ExitError
	if errors.As(ch.err, &ee) {
		return ee.ExitCode()
	}
	if ch.err != nil {
		return -1
	}
	return 0
}

// injectAt waits until the destination holds at least k messages, then
// runs inject; it reports false when warren ended before that point.
func injectAt(t *testing.T, s *scene, ch *child, destination string, k int, inject func()) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn := s.dial(t)
	defer conn.Close()
	poll := s.channel(t, conn)
	for ch.running() {
		if ctx.Err() != nil {
			t.Fatalf("%s never reached %d messages", destination, k)
		}
		q, err := depth(poll, destination)
		if err != nil {
			t.Fatalf("inspect %s: %v", destination, err)
		}
		if q.Messages >= k {
			inject()
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// injectWhenBrowsing runs inject once warren's browse session consumes
// from the DLQ.
func injectWhenBrowsing(t *testing.T, s *scene, ch *child, inject func()) bool {
	t.Helper()
	conn := s.dial(t)
	defer conn.Close()
	poll := s.channel(t, conn)
	deadline := time.Now().Add(time.Minute)
	for ch.running() && time.Now().Before(deadline) {
		q, err := depth(poll, dlqQueue)
		if err != nil {
			t.Fatalf("inspect %s: %v", dlqQueue, err)
		}
		if q.Consumers > 0 {
			inject()
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}
