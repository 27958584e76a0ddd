//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
)

const statusPasswordEnv = "WARREN_STATUS_TEST_PASSWORD"

// statusScene is a vhost of one test with a config pointing at it.
type statusScene struct {
	vhost  string
	ch     *amqp.Channel
	config string
}

func newStatusScene(t *testing.T) *statusScene {
	t.Helper()
	return newStatusSceneOn(t, testMgmt, testkit.AMQPURL)
}

// newStatusSceneOn makes the scene on the broker at mgmtURL and amqpURL
// (with guest's credentials in it).
func newStatusSceneOn(t *testing.T, mgmtURL, amqpURL string) *statusScene {
	t.Helper()
	m, err := mgmt.New(mgmt.Options{URL: mgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	vhost := "warren-cli-status-" + hex.EncodeToString(rnd[:])
	admin := m.Admin()
	res, err := admin.PutVhost(vhost, rabbithole.VhostSettings{})
	if err != nil {
		t.Fatalf("create vhost: %v (RabbitMQ with the management plugin must run at %s)", err, mgmtURL)
	}
	res.Body.Close()
	t.Cleanup(func() {
		if res, err := admin.DeleteVhost(vhost); err == nil {
			res.Body.Close()
		}
	})
	res, err = admin.UpdatePermissionsIn(vhost, "guest", rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	conn, err := amqp.Dial(amqpURL + url.PathEscape(vhost))
	if err != nil {
		t.Fatalf("RabbitMQ at %s unreachable: %v", hostOf(amqpURL), err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	s := &statusScene{vhost: vhost, ch: ch}
	s.config = writeStatusConfig(t, mgmtURL, vhost)
	testEnv(statusPasswordEnv, "guest")
	return s
}

func writeStatusConfig(t *testing.T, mgmtURL, vhost string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "warren.toml")
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = "`+testAMQP+`"
management_url = %q
username = "guest"
password_env = %q
vhost = %q
`, mgmtURL, statusPasswordEnv, vhost)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (s *statusScene) declare(t *testing.T, name string, args amqp.Table) {
	t.Helper()
	if _, err := s.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %q: %v", name, err)
	}
}

func (s *statusScene) publish(t *testing.T, queue string, n int, ts time.Time) {
	t.Helper()
	for range n {
		if err := s.ch.Publish("", queue, false, false, amqp.Publishing{Timestamp: ts, Body: []byte("m")}); err != nil {
			t.Fatal(err)
		}
	}
}

// runCmd runs one command built by newCmd with args; it returns stdout.
func runCmd(t *testing.T, configPath string, newCmd func(*App) *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &App{ConfigPath: configPath, In: strings.NewReader(""), Out: &out, Err: &errOut}
	cmd := newCmd(a)
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// pollStatus runs status --json until ok accepts it (statistics lag).
func pollStatus(t *testing.T, s *statusScene, ok func(statusJSON) bool) (statusJSON, string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := runCmd(t, s.config, newStatusCmd, "--json")
		if err != nil {
			t.Fatalf("status --json: %v", err)
		}
		var st statusJSON
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json printed invalid JSON: %v\n%s", err, out)
		}
		if ok(st) {
			return st, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the expected state; last:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func queueByName(st statusJSON, name string) *statusQueue {
	for i := range st.Queues {
		if st.Queues[i].Name == name {
			return &st.Queues[i]
		}
	}
	return nil
}

func TestStatusJSONCarriesTheContractFields(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	s := newStatusScene(t)
	s.declare(t, "orders.dlq", nil)
	s.declare(t, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	s.declare(t, "plain", nil)
	s.publish(t, "orders", 5, time.Now().Add(-time.Minute))
	s.publish(t, "plain", 1, time.Time{})
	for range 2 {
		d, ok, err := s.ch.Get("orders", false)
		if err != nil || !ok {
			t.Fatalf("get from orders: %v %v", ok, err)
		}
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
	}

	st, out := pollStatus(t, s, func(st statusJSON) bool {
		o, p := queueByName(st, "orders"), queueByName(st, "plain")
		return o != nil && p != nil && o.Messages == 3 && o.DLQ != nil && o.DLQ.Messages == 2 && p.Messages == 1 &&
			o.OldestAgeSeconds != nil // the head timestamp comes with the statistics, which lag
	})
	var raw struct {
		Queues []map[string]json.RawMessage `json:"queues"`
	}
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(out), &raw) != nil || json.Unmarshal([]byte(out), &top) != nil {
		t.Fatal("bad JSON")
	}
	if keys := slices.Sorted(maps.Keys(top)); !slices.Equal(keys, []string{"fallback", "nodes", "queues", "stats_age_seconds"}) {
		t.Fatalf("top-level keys %v", keys)
	}
	if string(top["fallback"]) != "null" {
		t.Fatalf("fallback = %s on the node the config names first; want null", top["fallback"])
	}
	wantKeys := []string{"ack_rate", "consumers", "delayed", "dlq", "dlq_of", "dlx_held", "drain_eta_seconds", "error_queue", "leader", "members", "members_down",
		"messages", "name", "oldest_age_seconds", "online", "publish_rate", "ready", "type", "unacked", "vhost"}
	for _, q := range raw.Queues {
		if keys := slices.Sorted(maps.Keys(q)); !slices.Equal(keys, wantKeys) {
			t.Fatalf("queue keys %v, want %v", keys, wantKeys)
		}
	}
	orders, plain, dlq := queueByName(st, "orders"), queueByName(st, "plain"), queueByName(st, "orders.dlq")
	if orders.Vhost != s.vhost || orders.Type != "classic" || orders.Ready != 3 || orders.Unacked != 0 {
		t.Fatalf("orders row %+v", orders)
	}
	if *orders.DLQ != (statusDLQ{Vhost: s.vhost, Name: "orders.dlq", Messages: 2, Pairing: "dlx"}) || dlq.DLQ != nil || dlq.Messages != 2 {
		t.Fatalf("dlq pairing: orders.dlq=%+v, dlq row %+v", orders.DLQ, dlq)
	}
	if len(dlq.DLQOf) != 1 || dlq.DLQOf[0] != (statusDLQOf{Vhost: s.vhost, Name: "orders", Pairing: "dlx"}) || plain.DLQOf == nil || len(plain.DLQOf) != 0 {
		t.Fatalf("dlq_of: orders.dlq serves %+v, plain %+v", dlq.DLQOf, plain.DLQOf)
	}
	if orders.OldestAgeSeconds == nil || *orders.OldestAgeSeconds < 59 || *orders.OldestAgeSeconds > 90 {
		t.Fatalf("orders oldest_age_seconds %v, want about 60", orders.OldestAgeSeconds)
	}
	if plain.OldestAgeSeconds != nil || plain.DrainETASeconds != nil {
		t.Fatalf("plain: oldest %v and drain %v should be null (no timestamp, not draining)", plain.OldestAgeSeconds, plain.DrainETASeconds)
	}
	if st.StatsAgeSeconds < 5 {
		t.Fatalf("stats_age_seconds %v is below the 5 s statistics interval", st.StatsAgeSeconds)
	}
}

func TestStatusTextSanitisesNamesAndDashesUnknownAges(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	s := newStatusScene(t)
	s.declare(t, "evil\x1b[31mred", nil)
	s.publish(t, "evil\x1b[31mred", 1, time.Time{})
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := runCmd(t, s.config, newStatusCmd)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "\x1b") {
			t.Fatalf("an escape sequence reached the output:\n%q", out)
		}
		if strings.Contains(out, `evil\x1b[31mred`) && strings.Contains(out, "—") &&
			strings.Contains(out, "no timestamp property") && strings.Contains(out, "no consumers") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status text lacks the sanitised name, the dash or its reason:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestStatusFailsWithOneClearLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	tests := []struct {
		name, url, password string
		want                []string
	}{
		{"broker down or management plugin off", closed, "guest",
			[]string{"unreachable", "is the management plugin enabled?", "rabbitmq-plugins enable rabbitmq_management"}},
		{"wrong password", testMgmt, "Wrong-Password-7", []string{`bad credentials for user "guest"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(statusPasswordEnv, tt.password)
			out, err := runCmd(t, writeStatusConfig(t, tt.url, ""), newStatusCmd, "--json")
			if app.ExitCode(err) != app.ExitFailure || out != "" {
				t.Fatalf("exit %d, stdout %q, err %v", app.ExitCode(err), out, err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, tt.password) && tt.password != "guest" {
				t.Fatalf("not one clean line: %q", msg)
			}
		})
	}
}

func TestStatusBadConfigIsUsage(t *testing.T) {
	_, err := runCmd(t, filepath.Join(t.TempDir(), "missing.toml"), newStatusCmd)
	if app.ExitCode(err) != app.ExitUsage {
		t.Fatalf("exit %d: %v", app.ExitCode(err), err)
	}
}

// With the password variable unset an empty password is sent; the
// refusal then names the variable instead of suggesting a wrong password.
func TestStatusNamesAnUnsetPasswordVariable(t *testing.T) {
	t.Setenv(statusPasswordEnv, "") // restored after the test
	if err := os.Unsetenv(statusPasswordEnv); err != nil {
		t.Fatal(err)
	}
	_, err := runCmd(t, writeStatusConfig(t, testMgmt, ""), newStatusCmd, "--json")
	if app.ExitCode(err) != app.ExitFailure {
		t.Fatalf("exit %d: %v", app.ExitCode(err), err)
	}
	want := "the environment variable " + statusPasswordEnv + " (password_env) is not set"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `bad credentials for user "guest"`) {
		t.Fatalf("%q lacks %q", err, want)
	}
}

func TestStatusTextWordsFactsAsTheOverviewDoes(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	head := now.Add(-65 * time.Minute)
	s := &domain.Snapshot{TakenAt: now, StatsAge: 1500 * time.Millisecond, Queues: []domain.Queue{
		{Vhost: "/", Name: "draining", Type: "classic", Messages: 320, Ready: 320, Consumers: 2, HasRates: true,
			PublishRate: 5, AckRate: 15, HeadMessageTimestamp: &head},
		{Vhost: "/", Name: "growing", Type: "classic", Messages: 10, Ready: 10, Consumers: 1, HasRates: true,
			PublishRate: 20.34, AckRate: 8},
	}}
	var out bytes.Buffer
	if err := writeStatusText(&out, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stats at most 2s old", "ETA 32s", "1h05m", "growing +12/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status text lacks %q:\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		// VHOST QUEUE TYPE READY UNACKED CONS OLDEST IN/s OUT/s ...
		if f := strings.Fields(line); len(f) > 8 && f[1] == "growing" && (f[7] != "20" || f[8] != "8.0") {
			t.Errorf("rates %s and %s, want the overview's 20 and 8.0:\n%s", f[7], f[8], line)
		}
	}
}
