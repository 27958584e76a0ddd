package ops

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
)

// The one rule for typed confirmations: a production context asks for
// the phrase whatever the count; another context asks only above its
// threshold (the default when none is set). The phrase is the queue's
// name, made safe for a terminal, and the count.
func TestConfirmForAsksThePhraseInProductionOrAboveTheThreshold(t *testing.T) {
	const escaped = "orders\x1b[2J\x1b]0;pwned\x07.dlq"
	tests := []struct {
		name      string
		env       string
		threshold int
		queue     string
		n         int
		want      Confirm
	}{
		{"production, one message", "prod", 100, "orders.dlq", 1,
			Confirm{Phrase: "orders.dlq 1", Why: "production context"}},
		{"production, none", "prod", 100, "orders.dlq", 0,
			Confirm{Phrase: "orders.dlq 0", Why: "production context"}},
		{"production, above the threshold", "prod", 10, "orders.dlq", 500,
			Confirm{Phrase: "orders.dlq 500", Why: "production context"}},
		{"production, no threshold set", "prod", 0, "orders.dlq", 2,
			Confirm{Phrase: "orders.dlq 2", Why: "production context"}},
		{"staging, none", "staging", 10, "orders.dlq", 0, Confirm{}},
		{"staging, below the threshold", "staging", 10, "orders.dlq", 9, Confirm{}},
		{"staging, at the threshold", "staging", 10, "orders.dlq", 10, Confirm{}},
		{"staging, above the threshold", "staging", 10, "orders.dlq", 11,
			Confirm{Phrase: "orders.dlq 11", Why: "more than 10 messages"}},
		{"no environment, at the default threshold", "", 0, "orders.dlq", config.DefaultConfirmThreshold, Confirm{}},
		{"no environment, above the default threshold", "", 0, "orders.dlq", config.DefaultConfirmThreshold + 1,
			Confirm{Phrase: "orders.dlq 101", Why: "more than 100 messages"}},
		{"a threshold above the default", "dev", 1000, "orders.dlq", 500, Confirm{}},
		{"a name with escape sequences, production", "prod", 100, escaped, 3,
			Confirm{Phrase: `orders\x1b[2J\x1b]0;pwned\x07.dlq 3`, Why: "production context"}},
		{"a name with escape sequences, above the threshold", "dev", 0, escaped, 101,
			Confirm{Phrase: `orders\x1b[2J\x1b]0;pwned\x07.dlq 101`, Why: "more than 100 messages"}},
		{"a name with escape sequences, at the threshold", "dev", 0, escaped, 100, Confirm{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &config.Context{Name: "test", Environment: tt.env, ConfirmThreshold: tt.threshold}
			got := confirmFor(c, tt.queue, tt.n)
			if got != tt.want {
				t.Fatalf("confirmFor(%q, %q, threshold %d, %d) = %+v, want %+v", tt.env, tt.queue, tt.threshold, tt.n, got, tt.want)
			}
			if strings.ContainsAny(got.Phrase, "\x1b\x07") {
				t.Errorf("phrase %q carries a control character to the terminal", got.Phrase)
			}
		})
	}
}

func TestConfirmWarningNamesWhyOnlyWhenAPhraseIsAsked(t *testing.T) {
	tests := []struct {
		name string
		c    Confirm
		want string
	}{
		{"no confirmation asked", Confirm{}, ""},
		{"a why without a phrase", Confirm{Why: "production context"}, ""},
		{"production", Confirm{Phrase: "orders.dlq 3", Why: "production context"},
			"production context: type the queue name and the count to confirm"},
		{"above the threshold", Confirm{Phrase: "orders.dlq 101", Why: "more than 100 messages"},
			"more than 100 messages: type the queue name and the count to confirm"},
		{"an import's file", Confirm{Phrase: "export.jsonl 101", Why: "more than 100 messages", File: true},
			"more than 100 messages: type the file name and the count to confirm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Warning(); got != tt.want {
				t.Fatalf("Warning() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A plan runs once, and not at all once closed: the page a stream's plan
// held is given back by Close, so running it then would act on what is no
// longer held.
func TestAPlanRunsOnceAndNotAfterClose(t *testing.T) {
	o := &Ops{c: Clients{Context: &config.Context{Name: "test"}}}
	runs := 0
	newPlan := func() *Plan {
		return &Plan{Action: Replay, run: func(context.Context, func(Progress)) (Result, error) {
			runs++
			return Result{}, nil
		}}
	}
	p := newPlan()
	if _, err := o.Run(context.Background(), p, nil); err != nil || runs != 1 {
		t.Fatalf("first run: %v, %d runs", err, runs)
	}
	if _, err := o.Run(context.Background(), p, nil); err == nil || runs != 1 {
		t.Fatalf("a plan ran twice: %v, %d runs", err, runs)
	}
	closed := newPlan()
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Run(context.Background(), closed, nil); err == nil || runs != 1 {
		t.Fatalf("a closed plan ran: %v, %d runs", err, runs)
	}
}

// A quarantine from a parking queue is refused, as bad usage, before
// anything is read: the one place every front end's quarantine passes.
// A replay from it (a release) and a quarantine from the DLQ are not.
func TestAQuarantineFromAParkingQueueIsRefused(t *testing.T) {
	o := &Ops{c: Clients{Context: &config.Context{Name: "test", Queues: []config.Queue{
		{Name: "orders", DLQ: "orders.dlq", Quarantine: "orders.parking"},
	}}}}
	tests := []struct {
		name    string
		action  Action
		queue   string
		refused bool
	}{
		{"quarantine from the configured parking queue", Quarantine, "orders.parking", true},
		{"quarantine from a DLQ's default parking queue", Quarantine, "payments.dlq.quarantine", true},
		{"a release from the parking queue", Replay, "orders.parking", false},
		{"quarantine from the DLQ", Quarantine, "orders.dlq", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := o.parkingRefusal(Scope{Action: tt.action, Queue: domain.QueueRef{Vhost: "/", Name: tt.queue}})
			var bad *actions.RequestError
			if got := errors.As(err, &bad); got != tt.refused {
				t.Fatalf("refused = %v (%v), want %v", got, err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "is a parking queue already; replay from it to release its messages") {
				t.Errorf("the refusal does not say what to do: %v", err)
			}
		})
	}
}

// The edit's draft holds the message's body: a plan refused before it is
// read (a read-only context here) removes it all the same.
func TestARefusedEditPlanRemovesTheDraft(t *testing.T) {
	o := &Ops{c: Clients{Context: &config.Context{Name: "ro", ReadOnly: true}}}
	f, err := os.CreateTemp(t.TempDir(), "draft-*.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := &EditDraft{Queue: domain.QueueRef{Vhost: "/", Name: "orders.dlq"}, Path: f.Name()}
	if _, err := o.Plan(context.Background(), Scope{Action: Edit, Queue: d.Queue, Draft: d}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("plan in a read-only context: %v, want ErrReadOnly", err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Fatalf("the draft %s is still there after a refused plan (%v)", d.Path, err)
	}
}

// A plan that moves nothing is idle, and is not run; finishing an
// interrupted import whose every message was confirmed moves nothing
// either, but closes the operation, so it runs, as a resume does.
func TestAPlanThatClosesAnOperationIsNeverIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Plan
		idle bool
	}{
		{"nothing to move", Plan{Decided: true, Action: Replay}, true},
		{"something to move", Plan{Decided: true, Action: Replay, Publish: 1}, false},
		{"an import whose every message was confirmed", Plan{Decided: true, Action: Import, Operation: "imp-1", Twins: 3}, false},
		{"a resume", Plan{Decided: true, Action: Resume}, false},
	} {
		if got := tc.p.Idle(); got != tc.idle {
			t.Errorf("%s: idle %v, want %v", tc.name, got, tc.idle)
		}
	}
}
