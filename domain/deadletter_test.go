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
