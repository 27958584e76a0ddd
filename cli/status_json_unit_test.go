package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
)

// A monitoring script that asks --check for JSON gets one document: each
// finding with its level in stable words, its queue or its node, its
// reasons, and the level the exit code says, which is the text form's.
func TestStatusCheckJSONIsOneDocumentOfTheFindings(t *testing.T) {
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	fake := &fakeManagement{snap: &domain.Snapshot{
		TakenAt:  now,
		Overview: domain.Overview{ClusterName: "rabbit@a", RabbitMQVersion: "4.3.6"},
		Nodes:    []domain.Node{{Name: "rabbit@a", Running: true}, {Name: "rabbit@b"}},
		Queues: []domain.Queue{
			{Vhost: "/", Name: "orders.dlq", Type: "classic", Messages: 1, Ready: 1,
				DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}},
			{Vhost: "/", Name: "idle", Type: "classic"},
		},
	}}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "status", "--check", "--json", "--window", "2s")
	if r.code() != 2 || !app.IsQuiet(r.err) {
		t.Fatalf("exit %d (%v), want 2 and nothing more said\n%s%s", r.code(), r.err, r.out, r.errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("--check --json printed no JSON document: %v\n%s", err, r.out)
	}
	// The fields a script relies on, by their names in the document.
	var doc struct {
		Level         string  `json:"level"`
		ExitCode      int     `json:"exit_code"`
		Contexts      int     `json:"contexts"`
		Queues        int     `json:"queues"`
		WindowSeconds float64 `json:"window_seconds"`
		Findings      []struct {
			Level              string
			Vhost, Queue, Node *string
			Reasons            []string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Level != "act_now" || doc.ExitCode != 2 || doc.Contexts != 1 || doc.Queues != 2 || doc.WindowSeconds != 2 || len(doc.Findings) != 2 {
		t.Fatalf("%+v, want act_now, exit 2, 1 context, 2 queues, over 2s, 2 findings\n%s", doc, r.out)
	}
	node, dlq := doc.Findings[0], doc.Findings[1]
	if node.Level != "act_now" || node.Node == nil || *node.Node != "rabbit@b" || node.Vhost != nil || node.Queue != nil ||
		strings.Join(node.Reasons, "; ") != "node rabbit@b: down" {
		t.Errorf("first finding %+v, want the node down, to act on now", node)
	}
	if dlq.Level != "worth_a_look" || dlq.Vhost == nil || *dlq.Vhost != "/" || dlq.Queue == nil || *dlq.Queue != "orders.dlq" ||
		dlq.Node != nil || strings.Join(dlq.Reasons, "; ") != "holds 1 dead letter" {
		t.Errorf("second finding %+v, want orders.dlq worth a look", dlq)
	}
	// One context: named by neither form.
	if strings.Contains(r.out, `"context"`) {
		t.Errorf("one context is named:\n%s", r.out)
	}

	// Nothing in trouble: exit 0, and the document says so.
	fake.snap.Nodes, fake.snap.Queues = fake.snap.Nodes[:1], fake.snap.Queues[1:]
	r = runUnit(t, fake, "--config", unitConfig(t, ""), "status", "--check", "--json", "--window", "2s")
	if r.err != nil {
		t.Fatalf("healthy: exit %d (%v)\n%s", r.code(), r.err, r.out)
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || got["level"] != "fine" || got["exit_code"] != 0.0 ||
		got["findings"] == nil || len(got["findings"].([]any)) != 0 {
		t.Errorf("healthy: %v %v, want level fine, exit_code 0 and findings []\n%s", got, err, r.out)
	}
}

// One read of every context measures no growth: the JSON says it is
// unknown (null), not 0, and that in_trouble leaves out what only a rise
// over time shows, naming what judges it.
func TestStatusAllContextsJSONSaysWhatOneReadCannotKnow(t *testing.T) {
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	fake := &fakeManagement{snap: &domain.Snapshot{
		TakenAt:  now,
		Overview: domain.Overview{ClusterName: "rabbit@a", RabbitMQVersion: "4.3.6"},
		Nodes:    []domain.Node{{Name: "rabbit@a", Running: true}},
		Queues: []domain.Queue{{Vhost: "/", Name: "orders.dlq", Type: "classic", Messages: 3, Ready: 3,
			DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}}},
	}}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "status", "--all-contexts", "--json")
	if r.err != nil {
		t.Fatalf("exit %d (%v)\n%s", r.code(), r.err, r.errOut)
	}
	var got struct {
		Contexts     []map[string]any `json:"contexts"`
		GrowthJudged *bool            `json:"growth_judged"`
		Note         string           `json:"note"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if len(got.Contexts) != 1 || got.Contexts[0]["dlq_messages"] != 3.0 {
		t.Fatalf("%s: want the one context with its 3 dead letters", r.out)
	}
	if growth, ok := got.Contexts[0]["dlq_growth"]; !ok || growth != nil {
		t.Errorf("dlq_growth %v (present %v), want null: one read measures no growth\n%s", growth, ok, r.out)
	}
	if got.GrowthJudged == nil || *got.GrowthJudged || !strings.Contains(got.Note, "in_trouble leaves out") ||
		!strings.Contains(got.Note, "status --check --all-contexts") {
		t.Errorf("growth_judged %v, note %q: want false, and a note saying what in_trouble leaves out and what judges it", got.GrowthJudged, got.Note)
	}
}
