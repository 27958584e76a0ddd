package format

import (
	"strings"
	"testing"
)

func TestCutKeepsWholeCharactersAndStatesTheLength(t *testing.T) {
	tests := []struct {
		s           string
		n           int
		shown, note string
	}{
		{"abc", 3, "abc", ""},
		{"", 0, "", ""},
		{"ação", 2, "aç", "… (4 characters, warren dlq show --json gives it whole)"},
		{"abc", 0, "", "… (3 characters, warren dlq show --json gives it whole)"},
		{strings.Repeat("x", 120_000), 1024, strings.Repeat("x", 1024), "… (120000 characters, warren dlq show --json gives it whole)"},
	}
	for _, tt := range tests {
		shown, note := Cut(tt.s, tt.n)
		if shown != tt.shown || note != tt.note {
			t.Errorf("Cut(%.10q…, %d) = %.10q…, %q; want %.10q…, %q", tt.s, tt.n, shown, note, tt.shown, tt.note)
		}
	}
}
