package cli

import (
	"testing"

	"github.com/warrenops/warren/app"
)

func TestBadUsageExitsTwo(t *testing.T) {
	cases := [][]string{
		{"nosuch"},
		{"status", "--bogus"},
		{"dlq", "ls"},
		{"audit", "export", "--format", "xml"},
	}
	for _, args := range cases {
		r := execCLI(t, args...)
		if r.code() != app.ExitUsage {
			t.Errorf("warren %v: exit %d (%v), want %d", args, r.code(), r.err, app.ExitUsage)
		}
	}
}
