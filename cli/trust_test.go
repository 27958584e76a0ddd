//go:build integration

package cli

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
)

// catcher stands where a hostile config points warren: an HTTP listener
// for the management API and a TCP one for AMQP, on 127.0.0.1, keeping
// every Authorization header and counting every connection.
type catcher struct {
	mgmt, amqp string
	mu         sync.Mutex
	auth       []string
	requests   int
	dials      int
}

func newCatcher(t *testing.T) *catcher {
	t.Helper()
	c := &catcher{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.requests++
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.dials++
			c.mu.Unlock()
			conn.Close()
		}
	}()
	c.mgmt, c.amqp = srv.URL, "amqp://"+ln.Addr().String()+"/"
	return c
}

// reached is how many requests and connections arrived, and the
// Authorization headers sent.
func (c *catcher) reached() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests + c.dials, append([]string(nil), c.auth...)
}

func randomSecret(t *testing.T) string {
	t.Helper()
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "secret-" + hex.EncodeToString(b[:])
}

// The experiment: a repository carries a warren.toml whose
// context points at a listener of its own and names a secret the
// operator holds for something else as the password. Running warren in
// that directory must send nothing there before the file is trusted, and
// even once it is trusted the file may not choose the secret.
func TestAWarrenTomlInTheWorkingDirectoryCannotSendASecretAnywhere(t *testing.T) {
	home := t.TempDir()
	trap := newCatcher(t)
	secret, keySecret := randomSecret(t), randomSecret(t)
	env := []string{"AWS_SECRET_ACCESS_KEY=" + secret}
	key := filepath.Join(home, ".ssh", "id_ed25519")
	writeFile(t, key, keySecret+"\n") // mode 0600, the user's: it passes as a secret's file
	hostile := func(source string) string {
		return fmt.Sprintf("current_context = \"repo\"\n[contexts.repo]\namqp_url = %q\nmanagement_url = %q\nmetrics_url = \"off\"\nusername = \"ops\"\n%s",
			trap.amqp, trap.mgmt, source)
	}
	cfg := filepath.Join(home, "warren.toml")
	noSecret := func(what string, r warrenRun) {
		t.Helper()
		for _, s := range []string{secret, keySecret} {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Fatalf("%s printed a secret:\n%s%s", what, r.stdout, r.stderr)
			}
		}
	}
	nothingReached := func(when string) {
		t.Helper()
		if n, auth := trap.reached(); n != 0 {
			t.Fatalf("%s: %d requests or connections reached the config's listener (Authorization %q)", when, n, auth)
		}
	}

	// Before trust: ignored, said in one line on stderr with the command
	// that trusts it; the local broker stands in.
	writeFile(t, cfg, hostile(`password_env = "AWS_SECRET_ACCESS_KEY"`+"\n"))
	for _, args := range [][]string{{"status"}, {"config", "check"}, {"dlq", "ls", "orders.dlq"}} {
		r := runWarren(t, home, env, args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if first != strings.TrimSuffix(ignoredNotice, "\n") {
			t.Fatalf("warren %s before trust: stderr %q, want first %q", strings.Join(args, " "), r.stderr, ignoredNotice)
		}
		noSecret("before trust", r)
	}
	nothingReached("before trust")

	// Trusted, the file is read, but its password_env is refused before
	// anything is dialled.
	r := runWarren(t, home, env, "config", "trust")
	data, _ := os.ReadFile(cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "warren.toml sha256:"+config.Sum(data)+"\n") ||
		!strings.Contains(r.stdout, "note: warren will still refuse it") {
		t.Fatalf("config trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	record := filepath.Join(home, ".local", "state", "warren", "trusted.json")
	if fi, err := os.Stat(record); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the trust record %s: %v %v, want mode 0600", record, fi, err)
	}
	for _, args := range [][]string{{"status"}, {"config", "check"}, {"dlq", "ls", "orders.dlq"}} {
		r := runWarren(t, home, env, args...)
		if r.code != app.ExitRefused || !strings.Contains(r.stdout+r.stderr, "contexts.repo.password_env is refused") ||
			!strings.Contains(r.stdout+r.stderr, "--config ./warren.toml") {
			t.Fatalf("warren %s after trust: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		noSecret("after trust", r)
	}
	nothingReached("after trust, password_env")

	// The second try, a private key as password_file: a changed
	// file is ignored until trusted again, and then refused the same way.
	writeFile(t, cfg, hostile(fmt.Sprintf("password_file = %q\n", key)))
	r = runWarren(t, home, env, "status")
	if !strings.HasPrefix(r.stderr, "warren: found ./warren.toml and ignored it: it changed since you trusted it") {
		t.Fatalf("a changed file: stderr %q", r.stderr)
	}
	if r := runWarren(t, home, env, "config", "trust"); r.code != 0 {
		t.Fatalf("config trust: exit %d\n%s", r.code, r.stderr)
	}
	r = runWarren(t, home, env, "status")
	if r.code != app.ExitRefused || !strings.Contains(r.stderr, "contexts.repo.password_file is refused") {
		t.Fatalf("status over a trusted file naming a key as password_file: exit %d\n%s", r.code, r.stderr)
	}
	noSecret("password_file", r)
	nothingReached("after trust, password_file")

	// A trusted file that names no secret's source is read: the listener
	// is reached, and no secret with it.
	writeFile(t, cfg, hostile(""))
	if r := runWarren(t, home, env, "config", "trust"); r.code != 0 {
		t.Fatalf("config trust: exit %d\n%s", r.code, r.stderr)
	}
	r = runWarren(t, home, env, "status")
	n, auth := trap.reached()
	if n == 0 || r.stderr == "" {
		t.Fatalf("the trusted file was not read: exit %d, %d requests\n%s", r.code, n, r.stderr)
	}
	for _, a := range auth {
		if a != "Basic "+base64.StdEncoding.EncodeToString([]byte("ops:")) {
			t.Fatalf("Authorization %q: something other than an empty password was sent", a)
		}
	}
}

func TestASecretFileOthersCanReadIsRefusedBeforeAnythingIsSent(t *testing.T) {
	home := t.TempDir()
	trap := newCatcher(t)
	pw := filepath.Join(home, "rabbit.pw")
	writeFile(t, pw, randomSecret(t)+"\n")
	if err := os.Chmod(pw, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "mine.toml")
	writeFile(t, cfg, fmt.Sprintf("[contexts.c]\namqp_url = %q\nmanagement_url = %q\nmetrics_url = \"off\"\npassword_file = %q\n", trap.amqp, trap.mgmt, pw))
	r := runWarren(t, home, nil, "--config", cfg, "status")
	want := "warren: password_file " + pw + " has mode 0644 and owner "
	if r.code != app.ExitRefused || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "`chmod 600 "+pw+"` fixes it") ||
		strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("status with a password_file others can read: exit %d, stderr %q", r.code, r.stderr)
	}
	if n, _ := trap.reached(); n != 0 {
		t.Fatalf("%d requests reached the broker with a password read from a file others can read", n)
	}
	if err := os.Chmod(pw, 0o600); err != nil {
		t.Fatal(err)
	}
	runWarren(t, home, nil, "--config", cfg, "status")
	if n, _ := trap.reached(); n == 0 {
		t.Fatal("a private password_file was refused too")
	}
}
