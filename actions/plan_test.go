package actions

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func letter(id, origin string, size int) domain.DeadLetter {
	return domain.DeadLetter{
		MessageID: id, LogicalID: id, LogicalIDFrom: domain.IDMessageID,
		OriginQueue: origin, RoutingKeys: []string{"rk." + origin}, Body: make([]byte, size),
	}
}

// onlyOrigin selects letters from one origin queue.
type onlyOrigin string

func (o onlyOrigin) Match(d domain.DeadLetter, _ *bool, _ time.Time) (bool, error) {
	return d.OriginQueue == string(o), nil
}

// failingFilter fails on every letter, like a filter evaluating a field of
// the wrong type.
type failingFilter struct{}

func (failingFilter) Match(domain.DeadLetter, *bool, time.Time) (bool, error) {
	return false, errors.New("bad field")
}

// seesApplied selects letters whose inbox status is unknown (nil).
type seesApplied struct{}

func (seesApplied) Match(_ domain.DeadLetter, applied *bool, _ time.Time) (bool, error) {
	return applied == nil, nil
}

func TestPlanSelectsDestinationsAndSkips(t *testing.T) {
	quarantined := letter("q1", "orders", 1)
	quarantined.Quarantined = true
	hashed := letter("h1", "orders", 1)
	hashed.LogicalIDFrom = domain.IDHash
	base := []domain.DeadLetter{
		letter("a", "orders", 10), letter("b", "orders", 20), letter("c", "billing", 5),
		letter("d", "", 7), quarantined, hashed,
	}
	tests := []struct {
		name                  string
		req                   Request
		wantTargets           []string // per item, in order
		wantApplied, wantQuar int
		wantNoDest            int
		wantBytes             int64
	}{
		{
			name:        "replay goes back to each origin queue through the default exchange",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base},
			wantTargets: []string{"queue:orders", "queue:orders", "queue:billing", "queue:orders"},
			wantQuar:    1, wantNoDest: 1, wantBytes: 36,
		},
		{
			name:        "applied logical IDs are skipped and counted",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base, InboxKnown: true, Applied: map[string]bool{"a": true, "h1": true}},
			wantTargets: []string{"queue:orders", "queue:billing", "queue:orders"},
			wantApplied: 1, wantQuar: 1, wantNoDest: 1, wantBytes: 26,
		},
		{
			name:        "include-applied replays applied ones too",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base, InboxKnown: true, Applied: map[string]bool{"a": true}, IncludeApplied: true},
			wantTargets: []string{"queue:orders", "queue:orders", "queue:billing", "queue:orders"},
			wantQuar:    1, wantNoDest: 1, wantBytes: 36,
		},
		{
			name:        "an unknown inbox skips nothing",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base, Applied: map[string]bool{"a": true}},
			wantTargets: []string{"queue:orders", "queue:orders", "queue:billing", "queue:orders"},
			wantQuar:    1, wantNoDest: 1, wantBytes: 36,
		},
		{
			name:        "an override with a routing key sends everything there",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base[:4], To: &Override{Exchange: "ex", RoutingKey: "k"}},
			wantTargets: []string{"exchange:ex/k", "exchange:ex/k", "exchange:ex/k", "exchange:ex/k"},
			wantBytes:   42,
		},
		{
			name:        "an override without a routing key keeps each original key",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base[:3], To: &Override{Exchange: "ex", KeepKey: true}},
			wantTargets: []string{"exchange:ex/rk.orders", "exchange:ex/rk.orders", "exchange:ex/rk.billing"},
			wantBytes:   35,
		},
		{
			name: "an override without a routing key leaves a message no record gives a key",
			req: Request{Action: ActionReplay, Queue: "dlq", To: &Override{Exchange: "ex", KeepKey: true}, Letters: []domain.DeadLetter{
				letter("a", "orders", 10),
				{MessageID: "bare", LogicalID: "bare", Body: make([]byte, 3)},
				{MessageID: "fanout", LogicalID: "fanout", Body: make([]byte, 4), Deaths: []domain.Death{{Queue: "orders", RoutingKeys: []string{""}}}},
			}},
			wantTargets: []string{"exchange:ex/rk.orders", "exchange:ex/"},
			wantNoDest:  1, wantBytes: 14,
		},
		{
			name:        "the filter narrows the selection",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base, Filter: onlyOrigin("billing")},
			wantTargets: []string{"queue:billing"},
			wantBytes:   5,
		},
		{
			name:        "the filter sees a hashed logical ID as unknown to the inbox",
			req:         Request{Action: ActionReplay, Queue: "dlq", Letters: base, InboxKnown: true, Filter: seesApplied{}},
			wantTargets: []string{"queue:orders"},
			wantBytes:   1,
		},
		{
			name:        "releasing from the parking queue includes quarantined messages",
			req:         Request{Action: ActionReplay, Queue: "dlq.quarantine", Letters: []domain.DeadLetter{quarantined}, Release: true},
			wantTargets: []string{"queue:orders"},
			wantBytes:   1,
		},
		{
			name:        "a letter that died in the queue it is held from has no destination",
			req:         Request{Action: ActionReplay, Queue: "orders", Letters: base[:1]},
			wantNoDest:  1,
			wantTargets: nil,
		},
		{
			name:        "quarantine sends everything to the parking queue, applied or not",
			req:         Request{Action: ActionQuarantine, Queue: "dlq", Parking: "dlq.quarantine", Reason: "bad schema", Letters: base[:4], InboxKnown: true, Applied: map[string]bool{"a": true}},
			wantTargets: []string{"queue:dlq.quarantine", "queue:dlq.quarantine", "queue:dlq.quarantine", "queue:dlq.quarantine"},
			wantBytes:   42,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range p.Items {
				got = append(got, it.Dest.Target())
			}
			if strings.Join(got, ",") != strings.Join(tc.wantTargets, ",") {
				t.Errorf("targets %v, want %v", got, tc.wantTargets)
			}
			if len(p.SkippedApplied) != tc.wantApplied || p.SkippedQuarantined != tc.wantQuar || p.NoDestination != tc.wantNoDest {
				t.Errorf("skipped applied %d quarantined %d no destination %d, want %d %d %d",
					len(p.SkippedApplied), p.SkippedQuarantined, p.NoDestination, tc.wantApplied, tc.wantQuar, tc.wantNoDest)
			}
			if p.Bytes != tc.wantBytes {
				t.Errorf("bytes %d, want %d", p.Bytes, tc.wantBytes)
			}
			sum := 0
			for _, g := range p.Groups {
				sum += g.Count
			}
			if sum != p.Selected() {
				t.Errorf("groups count %d messages, plan selects %d", sum, p.Selected())
			}
		})
	}
}

func TestTheQuestionSaysWhichMessagesHaveNoOriginalRoutingKey(t *testing.T) {
	p, err := NewPlan(Request{Action: ActionReplay, Queue: "dlq", To: &Override{Exchange: "ex", KeepKey: true},
		Letters: []domain.DeadLetter{letter("a", "orders", 1), {MessageID: "bare", LogicalID: "bare"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "1 without an original routing key stay (no x-death or framework header names one; give the key: --to EXCHANGE/KEY)"
	if s := p.Summary(); !strings.Contains(s, want) || strings.Contains(s, "origin queue") {
		t.Errorf("summary = %q, want the note %q", s, want)
	}
	p, err = NewPlan(Request{Action: ActionReplay, Queue: "dlq", Letters: []domain.DeadLetter{letter("a", "", 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Summary(); !strings.Contains(s, "1 without an origin queue stay (use --to)") {
		t.Errorf("summary without --to = %q", s)
	}
}

func TestPlanRefusesWhatCannotBeDone(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"unknown action", Request{Action: "delete"}, "unknown action"},
		{"quarantine without a reason", Request{Action: ActionQuarantine, Queue: "d", Parking: "p"}, "reason"},
		{"quarantine into itself", Request{Action: ActionQuarantine, Queue: "d", Parking: "d", Reason: "r"}, "parking queue"},
		{"a reason holding an escape", Request{Action: ActionQuarantine, Queue: "d", Parking: "p", Reason: "bad\x1b]52;c;eA==\a"}, "holds a control character"},
		{"negative rate", Request{Action: ActionReplay, Rate: -1}, "--rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestPlanLeavesOutWhatTheFilterCannotJudge(t *testing.T) {
	p, err := NewPlan(Request{Action: ActionReplay, Queue: "d", Letters: []domain.DeadLetter{letter("a", "o", 1), letter("b", "o", 1)}, Filter: failingFilter{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Selected() != 0 || p.FilterErrors != 2 || !strings.Contains(p.Summary(), "2 the filter could not judge stay (bad field)") {
		t.Fatalf("selected %d, filter errors %d, summary %q", p.Selected(), p.FilterErrors, p.Summary())
	}
}

func TestParseOverride(t *testing.T) {
	tests := []struct {
		in      string
		want    Override
		wantErr bool
	}{
		{in: "orders", want: Override{Exchange: "orders", KeepKey: true}},
		{in: "orders/order.created", want: Override{Exchange: "orders", RoutingKey: "order.created"}},
		{in: "orders/a/b", want: Override{Exchange: "orders", RoutingKey: "a/b"}},
		{in: "orders/", want: Override{Exchange: "orders"}},
		{in: "/orders", want: Override{RoutingKey: "orders"}},
		{in: "amq.default/orders", want: Override{RoutingKey: "orders"}},
		{in: "", wantErr: true},
		{in: "/", wantErr: true},
		{in: "amq.default", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseOverride(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSummaryStatesCountsDestinationsAndSkips(t *testing.T) {
	many := make([]domain.DeadLetter, 0, 40)
	for i := range 37 {
		many = append(many, letter(msgID(i), "orders", 100))
	}
	for i := range 3 {
		many = append(many, letter("applied-"+msgID(i), "orders", 100))
	}
	applied := map[string]bool{"applied-" + msgID(0): true, "applied-" + msgID(1): true, "applied-" + msgID(2): true}
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{
			name: "one destination",
			req:  Request{Action: ActionReplay, Queue: "orders.dlq", Letters: many, InboxKnown: true, Applied: applied},
			want: "Replay 37 messages (3.6 KiB) from orders.dlq to queue orders (default exchange)? 3 already applied will be skipped",
		},
		{
			name: "several destinations",
			req:  Request{Action: ActionReplay, Queue: "d", InboxKnown: true, Letters: []domain.DeadLetter{letter("a", "x", 1), letter("b", "y", 1), letter("c", "y", 1)}},
			want: "Replay 3 messages (3 B) from d to 2 destinations (queue y (default exchange): 2, queue x (default exchange): 1)?",
		},
		{
			name: "quarantine names its reason",
			req:  Request{Action: ActionQuarantine, Queue: "d", Parking: "d.quarantine", Reason: "bad schema", Letters: []domain.DeadLetter{letter("a", "x", 1)}},
			want: `Quarantine 1 message (1 B) from d to queue d.quarantine (default exchange) with reason "bad schema"?`,
		},
		{
			name: "release from the parking queue",
			req:  Request{Action: ActionReplay, Queue: "d.quarantine", Release: true, InboxKnown: true, Letters: []domain.DeadLetter{letter("a", "x", 1)}, Rate: 50},
			want: "Release 1 message (1 B) from d.quarantine to queue x (default exchange)? at most 50/s",
		},
		{
			name: "nothing left to do",
			req:  Request{Action: ActionReplay, Queue: "d", InboxKnown: true, Applied: map[string]bool{"a": true}, Letters: []domain.DeadLetter{letter("a", "x", 1)}},
			want: "Nothing to replay from d: 1 already applied will be skipped",
		},
		{
			name: "an unknown inbox is said",
			req:  Request{Action: ActionReplay, Queue: "d", Letters: []domain.DeadLetter{letter("a", "x", 1)}},
			want: "Replay 1 message (1 B) from d to queue x (default exchange)? inbox unknown: applied messages cannot be skipped",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Summary(); got != tc.want {
				t.Fatalf("summary\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// An override is named in words where the operator reads it (an
// import's plan, an interrupted import's refusal), not in --to's syntax.
func TestOverrideWords(t *testing.T) {
	for _, tt := range []struct {
		o    Override
		want string
	}{
		{Override{RoutingKey: "orders.dlq"}, "queue orders.dlq (default exchange)"},
		{Override{Exchange: "orders", RoutingKey: "order.placed"}, "exchange orders (routing key order.placed)"},
		{Override{Exchange: "orders", KeepKey: true}, "exchange orders (each message's original routing key)"},
	} {
		if got := tt.o.Words(); got != tt.want {
			t.Errorf("%+v in words: %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestAPreviewTheFilterChoseNothingOfSaysSo(t *testing.T) {
	p := &Preview{Request: Request{Action: ActionReplay, Queue: "shipments_error"}, Read: 6, Filtered: 6}
	if got, want := p.Summary(), "Nothing to replay from shipments_error: read 6 messages of the queue; the filter chose none of them"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	// Some chosen, none moving (applied): the filter is not blamed.
	p = &Preview{Request: Request{Action: ActionReplay, Queue: "d"}, Read: 6, Filtered: 5, SkippedApplied: 1}
	if got := p.Summary(); strings.Contains(got, "filter") {
		t.Errorf("summary = %q, blames the filter", got)
	}
}
