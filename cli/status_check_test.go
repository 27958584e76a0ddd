//go:build integration

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/testkit"
)

// checkScene is a vhost where orders dead-letters into orders.dlq, and a
// config whose context t reads it; with down, a second context whose
// broker does not answer (a closed port).
func checkScene(t *testing.T, down bool) (string, *amqp.Channel, string) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-check")
	ch := testkit.Channel(t, testkit.Dial(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warren.toml")
	testEnv("WARREN_CHECK_TEST_PASSWORD", "guest")
	text := fmt.Sprintf(`current_context = "t"
[contexts.t]
amqp_url = "`+testAMQP+`"
management_url = "`+testMgmt+`"
username = "guest"
password_env = "WARREN_CHECK_TEST_PASSWORD"
vhost = %q
audit = "file:%s"
`, vhost, filepath.Join(dir, "audit.jsonl"))
	if down {
		text += `
[contexts.down]
amqp_url = "amqp://127.0.0.1:1/"
management_url = "http://127.0.0.1:1"
username = "guest"
password_env = "WARREN_CHECK_TEST_PASSWORD"
`
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return vhost, ch, cfg
}

func TestStatusCheckExitsByTheWorstFinding(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	_, ch, cfg := checkScene(t, false)

	// Healthy: nothing in trouble.
	out, errOut, err := runAction(t, cfg, newStatusCmd, "--check", "--window", "2s")
	if err != nil || !strings.HasPrefix(out, "ok: nothing in trouble (2 queues in 1 context") {
		t.Fatalf("healthy: exit %d (%v), printed %q %q; want 0 and ok", app.ExitCode(err), err, out, errOut)
	}

	// Dead letters waiting: worth a look.
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-1", Body: []byte("b")}})
	out, _, err = runAction(t, cfg, newStatusCmd, "--check", "--window", "2s")
	if app.ExitCode(err) != 1 || !app.IsQuiet(err) || !strings.Contains(out, "worth a look") || !strings.Contains(out, "/orders.dlq: holds 1 dead letter") || strings.Contains(out, "1 dead letters") || strings.Contains(out, "act now") {
		t.Fatalf("dead letters waiting: exit %d, printed %q; want 1 and the DLQ worth a look", app.ExitCode(err), out)
	}

	// Dead letters arriving while the check watches: act now.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			_ = ch.Publish("", "orders", false, false, amqp.Publishing{MessageId: fmt.Sprintf("a-%d", i), Expiration: "0", Body: []byte("b")})
		}
	}()
	out, _, err = runAction(t, cfg, newStatusCmd, "--check", "--window", "4s")
	close(stop)
	wg.Wait()
	if app.ExitCode(err) != 2 || !strings.HasPrefix(out, "act now") || !strings.Contains(out, "orders") {
		t.Fatalf("dead letters arriving: exit %d, printed %q; want 2 and act now first", app.ExitCode(err), out)
	}
}

func TestStatusCheckAllContextsNamesTheOneThatDoesNotAnswer(t *testing.T) {
	_, _, cfg := checkScene(t, true)
	out, _, err := runAction(t, cfg, newStatusCmd, "--check", "--window", "2s", "--all-contexts")
	if app.ExitCode(err) != 2 || !strings.HasPrefix(out, "act now") || !strings.Contains(out, "down  cannot be judged: the management API did not answer") {
		t.Fatalf("exit %d, printed %q; want 2 naming the context that did not answer", app.ExitCode(err), out)
	}
	if strings.Contains(out, "  t  ") {
		t.Errorf("the healthy context has a finding:\n%s", out)
	}
}

// --check --json says what the lines say, as one document a monitoring
// script parses, and exits as they do: 0 healthy, 1 worth a look, 2 act
// now; with --all-contexts each finding names its context.
func TestStatusCheckJSONSaysTheFindingsAndExitsAsTheLines(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	vhost, ch, cfg := checkScene(t, false)
	type doc struct {
		Level    string `json:"level"`
		ExitCode int    `json:"exit_code"`
		Queues   int    `json:"queues"`
		Findings []struct {
			Level   string   `json:"level"`
			Context *string  `json:"context"`
			Vhost   *string  `json:"vhost"`
			Queue   *string  `json:"queue"`
			Reasons []string `json:"reasons"`
		} `json:"findings"`
	}
	check := func(args ...string) (doc, string, error) {
		t.Helper()
		out, _, err := runAction(t, cfg, newStatusCmd, append([]string{"--check", "--json", "--window", "2s"}, args...)...)
		var d doc
		if jerr := json.Unmarshal([]byte(out), &d); jerr != nil {
			t.Fatalf("--check --json printed no JSON document (%v), exit %d:\n%s", jerr, app.ExitCode(err), out)
		}
		return d, out, err
	}

	d, out, err := check()
	if err != nil || d.Level != "fine" || d.ExitCode != 0 || d.Findings == nil || len(d.Findings) != 0 || d.Queues != 2 {
		t.Fatalf("healthy: exit %d (%v), %s; want 0, level fine, findings []", app.ExitCode(err), err, out)
	}

	testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "m-1", Body: []byte("b")}})
	d, out, err = check()
	if app.ExitCode(err) != 1 || !app.IsQuiet(err) || d.Level != "worth_a_look" || d.ExitCode != 1 {
		t.Fatalf("dead letters waiting: exit %d, %s; want 1 and worth_a_look", app.ExitCode(err), out)
	}
	found := false
	for _, f := range d.Findings {
		if f.Queue != nil && *f.Queue == "orders.dlq" {
			found = f.Level == "worth_a_look" && f.Vhost != nil && *f.Vhost == vhost && strings.Join(f.Reasons, "; ") == "holds 1 dead letter" && f.Context == nil
		}
	}
	if !found || strings.Contains(out, "worth a look ") {
		t.Errorf("dead letters waiting: %s; want orders.dlq of %s worth_a_look, holding 1 dead letter, no context named", out, vhost)
	}

	_, _, cfg = checkScene(t, true)
	d, out, err = check("--all-contexts")
	if app.ExitCode(err) != 2 || d.Level != "act_now" || d.ExitCode != 2 || len(d.Findings) == 0 {
		t.Fatalf("a context down: exit %d, %s; want 2 and act_now", app.ExitCode(err), out)
	}
	if f := d.Findings[0]; f.Level != "act_now" || f.Context == nil || *f.Context != "down" || f.Queue != nil ||
		!strings.HasPrefix(strings.Join(f.Reasons, "; "), "cannot be judged: the management API did not answer") {
		t.Errorf("a context down: %s; want its finding first, naming it, no queue", out)
	}
	for _, f := range d.Findings {
		if f.Context == nil || *f.Context == "t" {
			t.Errorf("with --all-contexts, a finding of the healthy context or none named: %s", out)
		}
	}
}

// A DLQ a client declares as its first dead letters come, while the
// check watches, is dead letters arriving: act now, as one that was
// there empty would be.
func TestStatusCheckActsOnADLQDeclaredWhileItWatches(t *testing.T) {
	t.Parallel() // it waits on the broker's statistics and timers, not on CPU
	_, ch, cfg := checkScene(t, false)
	declared := make(chan error, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		_, err := ch.QueueDeclare("late.dlq", true, false, false, false, nil)
		if err == nil {
			_, err = ch.QueueDeclare("late", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "late.dlq"})
		}
		for i := 0; err == nil && i < 5; i++ {
			err = ch.Publish("", "late", false, false, amqp.Publishing{MessageId: fmt.Sprintf("l-%d", i), Expiration: "0", Body: []byte("b")})
		}
		declared <- err
	}()
	out, _, err := runAction(t, cfg, newStatusCmd, "--check", "--window", "12s")
	if derr := <-declared; derr != nil {
		t.Fatal(derr)
	}
	if app.ExitCode(err) != 2 || !strings.Contains(out, "late.dlq") || !strings.HasPrefix(out, "act now") {
		t.Fatalf("a DLQ declared and filled while the check watched: exit %d, printed %q; want 2 and act now", app.ExitCode(err), out)
	}
}
