package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// config is the command line.
type config struct {
	warren   string
	amqpAddr string
	mgmtURL  string
	// metricsURL is the broker's Prometheus endpoint, given to the
	// dashboard as metrics_url; "" leaves warren's default.
	metricsURL string
	user       string
	password   string
	pgDSN      string
	keep       bool
	vhosts     int      // vhosts an overview size is spread over
	reuse      []string // vhosts of an earlier run to measure the overview on
}

// bench holds what every workload shares.
type bench struct {
	cfg    config
	dir    string // scratch: the binary, configs, audit logs
	http   *http.Client
	proxy  *proxy
	closed []func()

	mu     sync.Mutex
	vhosts map[string]bool // made and not deleted yet, for an interrupt
}

// passwordEnv names the variable the generated configs read the broker
// password from, so it is never written to a file.
const passwordEnv = "WARREN_BENCH_PASSWORD"

func newBench(cfg config) (*bench, error) {
	dir, err := os.MkdirTemp("", "warren-bench-")
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, dir: dir, http: &http.Client{Timeout: 2 * time.Minute}, vhosts: map[string]bool{}}
	b.closed = append(b.closed, func() {
		if cfg.keep {
			b.logf("kept the workloads' files (configs, audit logs, the export) in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if _, err := b.mgmt(http.MethodGet, "/api/overview", nil, nil); err != nil {
		b.close()
		return nil, fmt.Errorf("management API at %s: %w (the broker must run with the management plugin)", cfg.mgmtURL, err)
	}
	if b.cfg.warren == "" {
		b.cfg.warren = filepath.Join(dir, "warren")
		b.logf("building warren")
		build := exec.Command("go", "build", "-o", b.cfg.warren, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			b.close()
			return nil, fmt.Errorf("build warren: %w", err)
		}
	}
	// The dashboard runs in the scratch directory: a relative path would
	// not reach the binary from there.
	if b.cfg.warren, err = filepath.Abs(b.cfg.warren); err != nil {
		b.close()
		return nil, err
	}
	px, err := newProxy(cfg.mgmtURL)
	if err != nil {
		b.close()
		return nil, err
	}
	b.proxy = px
	b.closed = append(b.closed, px.close)
	return b, nil
}

func (b *bench) close() {
	for i := len(b.closed) - 1; i >= 0; i-- {
		b.closed[i]()
	}
	b.closed = nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// mgmt calls the management API directly (not through the proxy) and
// decodes the answer into out when out is not nil.
func (b *bench) mgmt(method, path string, body, out any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.cfg.mgmtURL+path, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(b.cfg.user, b.cfg.password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		return raw, json.Unmarshal(raw, out)
	}
	return raw, nil
}

// openVhost creates a vhost for a workload and connects to it; release
// closes the connection and deletes the vhost with everything in it.
func (b *bench) openVhost(name string) (string, *amqp.Connection, func(), error) {
	vh, err := b.newVhost(name)
	if err != nil {
		return "", nil, nil, err
	}
	conn, err := b.dial(vh)
	if err != nil {
		b.deleteVhost(vh)
		return "", nil, nil, err
	}
	return vh, conn, func() { conn.Close(); b.deleteVhost(vh) }, nil
}

// openDLQScene is openVhost with origin dead-lettering into dlq, and the
// extra queues, declared: the scene of the workloads that read a DLQ.
func (b *bench) openDLQScene(name, origin, dlq string, extra ...declaration) (string, *amqp.Connection, func(), error) {
	vh, conn, release, err := b.openVhost(name)
	if err != nil {
		return "", nil, nil, err
	}
	qs := append([]declaration{{name: dlq}, {name: origin, args: amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}}}, extra...)
	if err := declareAll(conn, "", qs); err != nil {
		release()
		return "", nil, nil, err
	}
	return vh, conn, release, nil
}

// newVhost creates warren-bench-NAME-RANDOM with the user's permissions.
func (b *bench) newVhost(name string) (string, error) {
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	vh := "warren-bench-" + name + "-" + hex.EncodeToString(rnd[:])
	esc := url.PathEscape(vh)
	if _, err := b.mgmt(http.MethodPut, "/api/vhosts/"+esc, nil, nil); err != nil {
		return "", err
	}
	b.mu.Lock()
	b.vhosts[vh] = true
	b.mu.Unlock()
	perm := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	if _, err := b.mgmt(http.MethodPut, "/api/permissions/"+esc+"/"+url.PathEscape(b.cfg.user), perm, nil); err != nil {
		b.deleteVhost(vh)
		return "", err
	}
	return vh, nil
}

// deleteVhost removes the vhost and everything in it.
func (b *bench) deleteVhost(vh string) {
	if b.cfg.keep {
		b.logf("leaving vhost %s", vh)
		return
	}
	if _, err := b.mgmt(http.MethodDelete, "/api/vhosts/"+url.PathEscape(vh), nil, nil); err != nil {
		b.logf("warning: delete vhost %s: %v", vh, err)
		return
	}
	b.mu.Lock()
	delete(b.vhosts, vh)
	b.mu.Unlock()
}

// interrupted removes what a run stopped by a signal left on the broker.
func (b *bench) interrupted() {
	b.mu.Lock()
	left := make([]string, 0, len(b.vhosts))
	for vh := range b.vhosts {
		left = append(left, vh)
	}
	b.mu.Unlock()
	for _, vh := range left {
		b.deleteVhost(vh)
	}
	b.close()
}

// fileName names a vhost's scratch files; "" is every vhost.
func fileName(vhost string) string {
	if vhost == "" {
		return "all-vhosts"
	}
	return vhost
}

// writeConfig writes a warren config for one vhost and returns its path.
func (b *bench) writeConfig(vhost, extra string) (string, error) {
	path := filepath.Join(b.dir, fileName(vhost)+".toml")
	text := fmt.Sprintf(`current_context = "bench"

[contexts.bench]
amqp_url = "amqp://%s/"
management_url = %q
username = %q
password_env = %q
vhost = %q
refresh = "2s"
audit = %q
%s`, b.cfg.amqpAddr, b.cfg.mgmtURL, b.cfg.user, passwordEnv, vhost,
		"file:"+b.auditPath(vhost), extra)
	if b.cfg.metricsURL != "" {
		text += fmt.Sprintf("metrics_url = %q\n", b.cfg.metricsURL)
	}
	return path, os.WriteFile(path, []byte(text), 0o600)
}

// auditPath is the audit log of vhost's config.
func (b *bench) auditPath(vhost string) string {
	return filepath.Join(b.dir, fileName(vhost)+"-audit.jsonl")
}

// warrenCmd prepares the binary with a config and the password variable.
func (b *bench) warrenCmd(ctx context.Context, cfgPath string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.cfg.warren, append([]string{"--config", cfgPath}, args...)...)
	cmd.Env = append(os.Environ(), passwordEnv+"="+b.cfg.password)
	return cmd
}

// machine describes where the figures were taken.
func (b *bench) machine() string {
	var s strings.Builder
	var ov struct {
		RabbitMQ string `json:"rabbitmq_version"`
		Erlang   string `json:"erlang_version"`
	}
	_, _ = b.mgmt(http.MethodGet, "/api/overview", nil, &ov)
	fmt.Fprintf(&s, "date        %s\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&s, "cores       %d (%s/%s)\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&s, "memory      %s\n", memTotal())
	fmt.Fprintf(&s, "broker      RabbitMQ %s, Erlang %s\n", ov.RabbitMQ, ov.Erlang)
	fmt.Fprintf(&s, "go          %s\n", runtime.Version())
	return s.String()
}

func memTotal() string {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "MemTotal:")), "%f", &kb)
			return fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	return "unknown"
}

// vmHWM reads a live process's peak resident set size in MiB.
func vmHWM(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
