package domain

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestFilterSelectsDeadLetters(t *testing.T) {
	now := t0.Add(2 * time.Hour)
	letter := DeadLetter{
		LogicalID: "E-1", MessageID: "m-1", Reason: "rejected", OriginQueue: "orders", OriginExchange: "shop",
		Attempts: 3, Size: 120, DeadLetteredAt: t0,
		Headers: amqp.Table{"tenant": []byte("acme"), "prio": int16(5), "when": t0},
	}
	yes, no := true, false
	tests := []struct {
		name    string
		src     string
		letter  DeadLetter
		applied *bool
		want    bool
		wantErr string
	}{
		{"the design's example, pending", `reason == "rejected" && attempts >= 3 && applied == false`, letter, &no, true, ""},
		{"the design's example, applied", `reason == "rejected" && attempts >= 3 && applied == false`, letter, &yes, false, ""},
		{"the design's example, inbox unknown", `reason == "rejected" && attempts >= 3 && applied == false`, letter, nil, false, ""},
		{"unknown inbox is nil", `applied == nil`, letter, nil, true, ""},
		{"age in seconds", `age_seconds >= 7200`, letter, nil, true, ""},
		{"header bytes read as text", `header("tenant") == "acme"`, letter, nil, true, ""},
		{"header integer", `header("prio") > 3`, letter, nil, true, ""},
		{"missing header is nil", `header("nope") == nil`, letter, nil, true, ""},
		{"string functions", `origin_queue startsWith "ord" && logical_id matches "^E-"`, letter, nil, true, ""},
		{"origin exchange and size", `origin_exchange == "shop" && size < 1000 && !quarantined`, letter, nil, true, ""},
		{"message id", `message_id in ["m-1", "m-2"]`, letter, nil, true, ""},
		{"no time: age comparison fails loudly", `age_seconds > 60`, DeadLetter{}, nil, false, "age_seconds"},
		{"division", `size / 40 == 3 && header("prio") / 2 > 2`, letter, nil, true, ""},
		// expr would divide into +Inf, which is > 1: a typo would select
		// every message.
		{"division by zero is an error, not infinity", `attempts / 0 > 1`, letter, nil, false, "division by zero"},
		{"division of a header that is no number", `header("tenant") / 2 > 1`, letter, nil, false, "cannot divide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := CompileFilter(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Match(tt.letter, tt.applied, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Match error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Match = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestCompileFilterExplainsMistakes(t *testing.T) {
	tests := []struct{ name, src, mention string }{
		{"empty", "  ", "empty"},
		{"unknown field", `atempts > 3`, "atempts"},
		{"not boolean", `attempts + 1`, "bool"},
		{"syntax", `reason == `, "filter"},
		{"too long", strings.Repeat("a", maxFilterLen+1), "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileFilter(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("CompileFilter(%q) error = %v, want one mentioning %q", tt.src, err, tt.mention)
			}
		})
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
