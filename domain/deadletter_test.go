package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A message without a timestamp property says null in JSON, not the
// year 1; one with it says its time.
func TestPropertiesWithoutATimestampSayNull(t *testing.T) {
	b, err := json.Marshal(Properties{MessageID: "m-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"timestamp":null`) || strings.Contains(s, "0001") || !strings.Contains(s, `"message_id":"m-1"`) {
		t.Fatalf("no timestamp: %s", s)
	}
	at := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	b, _ = json.Marshal(Properties{Timestamp: at})
	if s := string(b); !strings.Contains(s, `"timestamp":"2026-12-06T03:00:00Z"`) || strings.Count(s, "timestamp") != 1 {
		t.Fatalf("a timestamp: %s", s)
	}
}

// A context that did not answer has its figures null in JSON, not 0.
func TestAFleetRowThatDidNotAnswerHasNoFigures(t *testing.T) {
	b, err := json.Marshal(FleetRow{Context: "staging", Environment: "staging", Err: "connection refused"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"nodes", "nodes_running", "queues", "in_trouble", "worth_a_look", "dlq_messages", "dlq_growth", "deepest_dlq_messages", "alarms"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if got["error"] != "connection refused" || got["context"] != "staging" {
		t.Errorf("row %s", b)
	}
	one := int64(3)
	b, _ = json.Marshal(FleetRow{Context: "prod", Queues: 2, DLQMessages: 5, Growth: &one})
	if s := string(b); !strings.Contains(s, `"queues":2`) || !strings.Contains(s, `"dlq_messages":5`) || !strings.Contains(s, `"dlq_growth":3`) || strings.Contains(s, `"error"`) {
		t.Errorf("an answered row: %s", s)
	}
}
