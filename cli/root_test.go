package cli

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
)

func TestBadUsageExitsTwo(t *testing.T) {
	cases := [][]string{
		{"nosuch"},
		{"status", "--bogus"},
		{"dlq", "ls"},
		{"audit", "export", "--format", "xml"},
		{"dlq", "replay", "q", "--rate", "NaN", "--dry-run"},
		{"dlq", "replay", "q", "--rate", "Inf", "--dry-run"},
		{"dlq", "replay", "q", "--canary", "5", "--halt-at", "NaN", "--dry-run"},
		{"dlq", "import", "f.jsonl", "--to", "q", "--rate", "NaN"},
		{"dlq", "show", "q", "--id", "a", "--limit", "-3"},
		{"dlq", "show", "q", "--id", "a", "--limit", "0"},
	}
	for _, args := range cases {
		r := execCLI(t, args...)
		if r.code() != app.ExitUsage {
			t.Errorf("warren %v: exit %d (%v), want %d", args, r.code(), r.err, app.ExitUsage)
		}
	}
}

// A flag whose empty value would act as if it were left out — often on
// more than was meant — is refused empty, before anything is read: a
// script's `--to "$DEST"` with DEST unset must not replay into the queue
// that failed.
func TestAnEmptyValueOfAFlagThatNamesSomethingIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"dlq", "replay", "orders.dlq", "--to", "", "--yes"},
		{"dlq", "replay", "orders.dlq", "--filter", " ", "--yes"},
		{"dlq", "quarantine", "orders.dlq", "--group", "", "--reason", "x", "--yes"},
		{"dlq", "export", "orders.dlq", "--output", ""},
		{"dlq", "replay", "orders.dlq", "--rate", "", "--yes"},
		{"dlq", "resume", "orders.dlq", "--operation", ""},
		{"status", "--context", ""},
	} {
		r := execCLI(t, args...)
		if r.code() != app.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), "is empty: give it a value, or leave it out") {
			t.Errorf("warren %q: exit %d (%v), want 2 naming the empty flag", args, r.code(), r.err)
		}
	}
	// --reason is required: "leave it out" would be no way out.
	r := execCLI(t, "dlq", "quarantine", "orders.dlq", "--reason", " ", "--yes")
	if r.code() != app.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), "--reason is empty: say why") || strings.Contains(r.err.Error(), "leave it out") {
		t.Errorf("an empty --reason: exit %d (%v), want 2 asking for a reason", r.code(), r.err)
	}
}
