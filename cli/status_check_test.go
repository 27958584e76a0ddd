//go:build integration

package cli

import (
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
	t.Setenv("WARREN_CHECK_TEST_PASSWORD", "guest")
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
