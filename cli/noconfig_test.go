//go:build integration

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
)

// These run this test binary as warren (TestMain) in an empty HOME and
// an empty working directory, so no config file is found: the local
// RabbitMQ at its default ports is the broker warren must find, whichever
// broker WARREN_TEST_BROKER picks for the other tests.

// The broker at the default ports, with guest's credentials.
const defaultPortsAMQP, defaultPortsMgmt = "amqp://guest:guest@localhost:5672/", "http://localhost:15672"

type warrenRun struct {
	stdout, stderr string
	code           int
}

// runWarren runs warren with args in the empty home; env adds variables
// (WARREN_PASSWORD is unset unless env sets it).
func runWarren(t *testing.T, home string, env []string, args ...string) warrenRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = home
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "WARREN_PASSWORD":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME=", "WARREN_TEST_AS_WARREN=1")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return warrenRun{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func TestStatusJSONWithoutAConfigListsTheLocalBrokersQueues(t *testing.T) {
	s := newStatusSceneOn(t, defaultPortsMgmt, defaultPortsAMQP)
	s.declare(t, "nocfg-orders", nil)
	s.publish(t, "nocfg-orders", 3, time.Now())
	home := t.TempDir()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := runWarren(t, home, nil, "status", "--json")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("status --json without a config: exit %d\nstderr: %s", r.code, r.stderr)
		}
		var st statusJSON
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("invalid JSON: %v\n%s", err, r.stdout)
		}
		var got *statusQueue
		for i, q := range st.Queues {
			if q.Vhost == s.vhost && q.Name == "nocfg-orders" {
				got = &st.Queues[i]
			}
		}
		if got != nil && got.Messages == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local broker's queue %s/nocfg-orders with 3 messages is not in status --json: %+v", s.vhost, got)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, ".config")); len(entries) > 0 {
		t.Fatal("running without a config must not write one")
	}
}

func TestWithoutAConfigWarrenPasswordIsThePassword(t *testing.T) {
	home := t.TempDir()
	r := runWarren(t, home, []string{"WARREN_PASSWORD=not-guests"}, "status")
	if r.code != app.ExitFailure || !strings.Contains(r.stderr, "bad credentials") || !strings.Contains(r.stderr, "WARREN_PASSWORD") {
		t.Fatalf("a wrong WARREN_PASSWORD: exit %d, stderr %q; want exit 1 naming WARREN_PASSWORD", r.code, r.stderr)
	}
	r = runWarren(t, home, []string{"WARREN_PASSWORD=guest"}, "status")
	if r.code != 0 {
		t.Fatalf("WARREN_PASSWORD=guest: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestAOneOffTargetIsWhatWarrenReads(t *testing.T) {
	home := t.TempDir()
	// Nothing listens on port 1: the flag, not the default, was used.
	r := runWarren(t, home, nil, "--management-url", "http://127.0.0.1:1", "status")
	if r.code != app.ExitFailure || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Fatalf("--management-url: exit %d, stderr %q", r.code, r.stderr)
	}
	// Over a config whose context answers nothing, the flags reach the
	// local broker.
	s := newStatusScene(t)
	s.declare(t, "nocfg-override", nil)
	dead := writeStatusConfig(t, "http://127.0.0.1:1", s.vhost)
	r = runWarren(t, home, []string{statusPasswordEnv + "=guest"}, "--config", dead,
		"--amqp-url", testAMQP, "--management-url", testMgmt, "status", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"nocfg-override"`) {
		t.Fatalf("flags over a config: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// brokerUser creates a user of its own on the local 3.10 broker with a
// password no other text in the test contains, allowed on vhost and on
// the management API; it is deleted when t ends.
func brokerUser(t *testing.T, vhost string) (name, password string) {
	t.Helper()
	m, err := mgmt.New(mgmt.Options{URL: testMgmt, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	name = "warren-nocfg-" + hex.EncodeToString(rnd[:4])
	password = "pw-" + hex.EncodeToString(rnd[4:]) + "-secret"
	admin := m.Admin()
	res, err := admin.PutUser(name, rabbithole.UserSettings{Password: password, Tags: rabbithole.UserTags{"management"}})
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	res.Body.Close()
	t.Cleanup(func() {
		if res, err := admin.DeleteUser(name); err == nil {
			res.Body.Close()
		}
	})
	res, err = admin.UpdatePermissionsIn(vhost, name, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return name, password
}

func TestConfigInitThenConfigCheckPassWithNoSecretInTheFile(t *testing.T) {
	s := newStatusScene(t)
	user, password := brokerUser(t, s.vhost)
	home := t.TempDir()
	path := filepath.Join(home, "etc", "warren.toml")
	env := []string{"WARREN_NOCFG_TEST_PW=" + password}
	amqpURL := testAMQP + url.PathEscape(s.vhost)
	r := runWarren(t, home, env, "config", "init", "--context", "lab", "--amqp-url", amqpURL,
		"--management-url", testMgmt, "--username", user,
		"--password-env", "WARREN_NOCFG_TEST_PW", "--path", path)
	if r.code != 0 {
		t.Fatalf("config init: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// The metrics' line is optional: on 3.10, whose management API is on
	// 15672, the plugin answers on 15692; beside 4.3's 15673 none is looked
	// for.
	metrics := "metrics (optional)     ok    http://127.0.0.1:15692, node rabbit@"
	if testkit.Broker != "3.10" {
		metrics = "metrics (optional)     -     not read (metrics_url is"
	}
	for _, want := range []string{"wrote " + path + " (context lab)", "amqp                   ok", "management api         ok", "RabbitMQ " + testkit.Version(t), metrics} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("config init's check lacks %q:\n%s", want, r.stdout)
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), password) || strings.Contains(r.stdout+r.stderr, password) {
		t.Fatalf("the password reached the file or the output:\n%s", text)
	}
	if !strings.Contains(string(text), `password_env = "WARREN_NOCFG_TEST_PW"`) {
		t.Fatalf("the file does not name the password's variable:\n%s", text)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the config is not private to its owner: %v %v", info.Mode(), err)
	}

	r = runWarren(t, home, env, "--config", path, "config", "check")
	if r.code != 0 || strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "(context lab)") {
		t.Fatalf("config check on the written file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A second init is refused and leaves the file alone.
	r = runWarren(t, home, env, "config", "init", "--username", "someone-else", "--path", path)
	if r.code != app.ExitRefused || !strings.Contains(r.stderr, "already exists") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("config init over an existing file: exit %d, stderr %q", r.code, r.stderr)
	}
	if again, _ := os.ReadFile(path); string(again) != string(text) {
		t.Fatal("a refused init changed the file")
	}
	r = runWarren(t, home, env, "config", "init", "--username", "someone-else", "--path", path, "--force")
	if again, _ := os.ReadFile(path); !strings.Contains(string(again), `username = "someone-else"`) {
		t.Fatalf("config init --force did not overwrite: exit %d\n%s", r.code, again)
	}
}
