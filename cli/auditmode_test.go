package cli

import (
	"context"
	"os"
	"strings"
	"testing"
)

// An audit file others can read is warned of once a run, on stderr, with
// the chmod that fixes it; reading it still works.
func TestAnAuditFileOpenToOthersIsWarnedOfOnce(t *testing.T) {
	a, out, errOut, path := auditApp(t)
	writeOperation(t, path, "op-1", "orders.dlq", true)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := runAudit(context.Background(), a, "verify"); err != nil {
			t.Fatalf("verify: %v", err)
		}
	}
	want := "warren: warning: audit file " + path + " has mode 0644, open to others: `chmod 600 " + path + "` makes it its owner's alone\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q once", errOut.String(), want)
	}
	if !strings.HasPrefix(out.String(), "ok: 4 records") {
		t.Errorf("verify printed %q", out.String())
	}
}
