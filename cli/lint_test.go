//go:build integration

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/app"
)

func TestLintExitsOneOnErrorsAndListsEveryFinding(t *testing.T) {
	s := newStatusScene(t)
	s.declare(t, "lost", amqp.Table{"x-dead-letter-exchange": "no-such-exchange"})
	s.declare(t, "capped", amqp.Table{"x-max-length": 10})

	out, err := runCmd(t, s.config, newLintCmd, "--json")
	if app.ExitCode(err) != app.ExitFailure || !strings.Contains(err.Error(), "1 error(s)") {
		t.Fatalf("exit %d, err %v; want 1 for an error finding", app.ExitCode(err), err)
	}
	var got lintJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("lint --json printed invalid JSON: %v\n%s", err, out)
	}
	if got.Errors != 1 || got.Warnings != 1 || got.QueuesChecked != 2 || len(got.Findings) != 2 {
		t.Fatalf("summary %+v", got)
	}
	first, second := got.Findings[0], got.Findings[1]
	if first.Check != "dlx-missing" || first.Severity != "error" || first.Queue != "lost" || first.Vhost != s.vhost ||
		second.Check != "overflow-drop-head" || second.Queue != "capped" {
		t.Fatalf("findings %+v", got.Findings)
	}

	out, err = runCmd(t, s.config, newLintCmd)
	if app.ExitCode(err) != app.ExitFailure {
		t.Fatalf("text mode exit %d", app.ExitCode(err))
	}
	for _, want := range []string{"ERROR", "dlx-missing", s.vhost + "/lost", `"no-such-exchange" does not exist`,
		"WARNING", "2 finding(s) in 2 queue(s): 1 error(s), 1 warning(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestLintWarningsAloneExitZeroAndAHealthyVhostSaysSo(t *testing.T) {
	s := newStatusScene(t)
	s.declare(t, "orders.dlq", nil)
	s.declare(t, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	out, err := runCmd(t, s.config, newLintCmd)
	if err != nil || !strings.Contains(out, "no findings in 2 queue(s)") {
		t.Fatalf("healthy vhost: err %v, output %q", err, out)
	}

	s.declare(t, "capped", amqp.Table{"x-max-length": 10})
	out, err = runCmd(t, s.config, newLintCmd, "--json")
	if err != nil || !strings.Contains(out, `"warnings": 1`) || !strings.Contains(out, `"errors": 0`) {
		t.Fatalf("warnings only: err %v, output %s", err, out)
	}
}
