package audit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileStoreRefusesASymbolicLinkAsItsPath(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		target func(dir string) string
	}{
		{"a dangling link", func(dir string) string { return filepath.Join(dir, "elsewhere", "audit.jsonl") }},
		{"a link to a good log", func(dir string) string {
			p := filepath.Join(dir, "real.jsonl")
			writeChain(t, p, 3)
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := tt.target(dir)
			before, _ := os.ReadFile(target)
			path := filepath.Join(dir, "audit.jsonl")
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			s, _ := OpenFile(path)
			_, _, lastErr := s.Last(ctx)
			_, appendErr := s.Append(ctx, sample(1))
			errs := map[string]error{
				"Check":  s.Check(ctx),
				"Append": appendErr,
				"Last":   lastErr,
				"Scan":   s.Scan(ctx, func(Record) error { return nil }),
			}
			for op, err := range errs {
				if err == nil || !strings.Contains(err.Error(), path+" is a symbolic link (to "+target+")") || strings.Count(err.Error(), "audit:") != 1 {
					t.Errorf("%s = %v, want one error naming the link and its target", op, err)
				}
			}
			after, err := os.ReadFile(target)
			if before == nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the dangling link's target was created (%v)", err)
			}
			if before != nil && string(after) != string(before) {
				t.Error("the link's target changed")
			}
		})
	}
}

func TestFileStoreWarnsOfAModeOpenToOthersAndRefusesOneTheyCanWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "my audit.jsonl")
	s, _ := OpenFile(path)
	if got := s.ModeWarning(); got != "" {
		t.Errorf("ModeWarning of an absent file = %q, want none", got)
	}
	if _, err := s.Append(ctx, sample(1)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("a new log has mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	chmod := "`chmod 600 '" + path + "'`"
	tests := []struct {
		mode     fs.FileMode
		warning  string
		refusing bool
	}{
		{0o600, "", false},
		{0o700, "", false},
		{0o640, "audit file " + path + " has mode 0640, open to others: " + chmod + " makes it its owner's alone", false},
		{0o644, "audit file " + path + " has mode 0644, open to others: " + chmod + " makes it its owner's alone", false},
		{0o664, "audit file " + path + " has mode 0664: others can rewrite its records, so warren appends nothing to it until " + chmod, true},
		{0o602, "audit file " + path + " has mode 0602: others can rewrite its records, so warren appends nothing to it until " + chmod, true},
	}
	for _, tt := range tests {
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		if got := s.ModeWarning(); got != tt.warning {
			t.Errorf("mode %04o: ModeWarning = %q, want %q", tt.mode, got, tt.warning)
		}
		checkErr := s.Check(ctx)
		_, appendErr := s.Append(ctx, sample(2))
		for op, err := range map[string]error{"Check": checkErr, "Append": appendErr} {
			switch {
			case tt.refusing && (err == nil || err.Error() != "audit: "+strings.TrimPrefix(tt.warning, "audit file ")):
				t.Errorf("mode %04o: %s = %v, want the refusal %q", tt.mode, op, err, tt.warning)
			case !tt.refusing && err != nil:
				t.Errorf("mode %04o: %s = %v, want it written", tt.mode, op, err)
			}
		}
		// Reading, verify above all, still works on any mode.
		if _, ok, err := s.Last(ctx); err != nil || !ok {
			t.Errorf("mode %04o: Last = %v, %v", tt.mode, ok, err)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s, 5) // the first record and one per writable mode
}
