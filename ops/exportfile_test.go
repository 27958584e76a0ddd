package ops

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file put at the export's name while the export ran is not replaced:
// the export is kept beside it, complete, and named.
func TestAnExportKeepsAFileThatAppearedAtItsName(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".orders.jsonl.123")
	out := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(tmp, []byte("the export\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte("someone else's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := place(tmp, out, false)
	if !errors.Is(err, ErrOutputAppeared) {
		t.Fatalf("place over a file that appeared: %v, want ErrOutputAppeared", err)
	}
	err = writeError(out, err)
	if !errors.Is(err, ErrOutputAppeared) {
		t.Fatalf("writeError: %v, want ErrOutputAppeared", err)
	}
	if got, _ := os.ReadFile(out); string(got) != "someone else's\n" {
		t.Fatalf("the file that appeared holds %q, want it untouched", got)
	}
	kept := filepath.Join(dir, "warren-export-123-orders.jsonl")
	if got, _ := os.ReadFile(kept); string(got) != "the export\n" || !strings.Contains(err.Error(), "the export is complete in "+kept) {
		t.Fatalf("the export kept as %q (%q), error %q: want it whole and named", kept, got, err)
	}

	// With no file there, the export takes the name and its scratch name
	// is gone; with force, it replaces what is there.
	if err := os.WriteFile(tmp, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.jsonl")
	if err := place(tmp, fresh, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(fresh); string(got) != "second\n" {
		t.Fatalf("placed file holds %q", got)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the scratch name is still there: %v", err)
	}
	if err := os.WriteFile(tmp, []byte("third\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := place(tmp, out, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "third\n" {
		t.Fatalf("forced: the file holds %q, want the export", got)
	}
}
