package cli

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/ops"
)

// Before anything is read: a file there is refused without force, a
// directory always, a name not taken or stdout never.
func TestAnExportChecksItsOutputBeforeReading(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "e.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// What an export would replace by renaming its file over it, even
	// with --force: a pipe, a symbolic link, a device.
	fifo, link := filepath.Join(dir, "fifo"), filepath.Join(dir, "link.jsonl")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		output string
		force  bool
		want   int
	}{
		{"-", false, app.ExitOK},
		{filepath.Join(dir, "new.jsonl"), false, app.ExitOK},
		{file, false, app.ExitRefused},
		{file, true, app.ExitOK},
		{dir, false, app.ExitUsage},
		{dir, true, app.ExitUsage},
		{fifo, true, app.ExitUsage},
		{link, true, app.ExitUsage},
		{os.DevNull, true, app.ExitUsage},
	} {
		if got := app.ExitCode(outputError(ops.CheckOutput(tc.output, tc.force), "")); got != tc.want {
			t.Errorf("checkOutput(%s, force %v): exit %d, want %d", tc.output, tc.force, got, tc.want)
		}
	}
}
