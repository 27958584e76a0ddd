package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
)

// status refuses flags that do not go together, before it reads
// anything, naming what to drop.
func TestStatusRefusesFlagsThatDoNotGoTogether(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warren.toml")
	text := "current_context = \"a\"\n[contexts.a]\namqp_url = \"amqp://127.0.0.1:1/\"\nmanagement_url = \"http://127.0.0.1:1\"\n" +
		"[contexts.b]\namqp_url = \"amqp://127.0.0.1:1/\"\nmanagement_url = \"http://127.0.0.1:1\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		context string
		args    []string
		want    string
	}{
		{"b", []string{"--check", "--all-contexts"}, "--all-contexts reads every context of the config: drop --context b"},
		{"b", []string{"--all-contexts", "--json"}, "drop --context b"},
		{"", []string{"--window", "5s"}, "--window goes with --check"},
		{"", []string{"--check", "--window", "1s"}, "--window 1s: want at least 2s"},
		{"", []string{"--all-contexts"}, "--all-contexts lists the fleet with --json"},
	} {
		var out, errOut bytes.Buffer
		a := &App{ConfigPath: cfg, ContextName: tc.context, In: strings.NewReader(""), Out: &out, Err: &errOut}
		cmd := newStatusCmd(a)
		cmd.SetArgs(tc.args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if app.ExitCode(err) != app.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) || out.Len() > 0 {
			t.Errorf("--context %q status %v: exit %d, error %v, printed %q; want a usage error saying %q and nothing printed",
				tc.context, tc.args, app.ExitCode(err), err, out.String(), tc.want)
		}
	}
}
