package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
)

// A report that cannot be written (a full disk) fails the command, even
// one that prints with fmt.Fprint and never looks at the error: `audit
// verify > report.txt` must not leave an empty report and exit 0.
func TestAReportThatCannotBeWrittenFailsTheCommand(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test writes to /dev/full: %v", err)
	}
	defer full.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "warren.toml")
	if err := os.WriteFile(config, []byte("current_context = \"a\"\n[contexts.a]\naudit = \"file:"+filepath.Join(dir, "audit.jsonl")+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"completion", "bash"}} {
		cmd := exec.Command(os.Args[0], append([]string{"--config", config}, args...)...)
		cmd.Env = append(os.Environ(), "WARREN_TEST_AS_WARREN=1")
		cmd.Stdout = full
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != app.ExitFailure {
			t.Fatalf("warren %v to a full disk: %v (stderr %q); want exit %d", args, err, stderr.String(), app.ExitFailure)
		}
		if !strings.Contains(stderr.String(), "no space left on device") {
			t.Fatalf("warren %v to a full disk said %q; want the write's error", args, stderr.String())
		}
	}
}
