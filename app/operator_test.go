package app

import (
	"strings"
	"testing"
)

// --operator names who acted in the audit log: a control character in
// it is refused as bad usage before anything is read or written.
func TestAnOperatorFlagWithAControlCharacterIsRefused(t *testing.T) {
	for _, name := range []string{"ana\nroot", "ana\x1b[2J", "ana\tb"} {
		f := New(Settings{Operator: name})
		_, err := f.Config()
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--operator") || strings.ContainsAny(err.Error(), "\n\x1b\t") {
			t.Errorf("--operator %q: exit %d (%v), want bad usage, said without the character", name, ExitCode(err), err)
		}
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	f := New(Settings{Operator: "Ana Lúcia"})
	if _, err := f.Config(); err != nil && strings.Contains(err.Error(), "--operator") {
		t.Errorf("a plain name is refused: %v", err)
	}
}
