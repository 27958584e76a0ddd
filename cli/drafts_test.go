package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A draft left by a warren killed outright (SIGKILL, a power cut) holds
// a message's body: the next warren to start removes it once it is a day
// old, and leaves alone what is recent, not a draft, or not a file.
func TestWarrenRemovesStaleDraftsAtStart(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-25 * time.Hour)
	files := map[string]bool{ // name → removed
		"warren-edit-4242-123.json":  true,
		"warren-edit-987654321.json": true, // named before drafts carried their PID
		"warren-edit-4242-456.json":  false,
		"warren-edit-notes.txt":      false,
		"other.json":                 false,
	}
	for name, stale := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(`{"body":"secret"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if stale || name != "warren-edit-4242-456.json" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	target := filepath.Join(t.TempDir(), "kept.json")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "warren-edit-1-1.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "--help")
	cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1", "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("warren --help: %v\n%s", err, out)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(tmp, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("a link named like a draft was removed: %v", err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target was removed: %v", err)
	}
}
