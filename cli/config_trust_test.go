package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
)

// trustHere is noConfigHere with warren's state kept by the test, so a
// trust record never outlives it; it returns the user's own config path.
func trustHere(t *testing.T) (own string) {
	t.Helper()
	noConfigHere(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "warren", "config.toml")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

const ignoredNotice = "warren: found ./warren.toml and ignored it: a config in the working directory is read only once you trust it; " +
	"review it, then run `warren config trust ./warren.toml` (or pass --config ./warren.toml)\n"

func TestAWorkingDirectoryConfigIsReadOnlyOnceTrusted(t *testing.T) {
	own := trustHere(t)
	writeFile(t, "warren.toml", "[contexts.here]\nmanagement_url = \"http://here.example:15672\"\n")

	// Untrusted, with nothing else: the local broker, and one line that
	// says so and names the command.
	got, r := targetOf(t, "status", "--json")
	if r.err != nil || !got.NoConfig() {
		t.Fatalf("before trust: %v, target %+v", r.err, got)
	}
	if r.errOut != ignoredNotice {
		t.Fatalf("stderr %q, want %q", r.errOut, ignoredNotice)
	}
	// The user's own config is the next place looked at.
	writeFile(t, own, "[contexts.mine]\nmanagement_url = \"http://mine.example:15672\"\n")
	got, r = targetOf(t, "status", "--json")
	if r.err != nil || got.Name != "mine" || r.errOut != ignoredNotice {
		t.Fatalf("before trust, beside the user's own: %v, context %q, stderr %q", r.err, got.Name, r.errOut)
	}

	r = execCLI(t, "config", "trust")
	abs, _ := filepath.Abs("warren.toml")
	data, _ := os.ReadFile("warren.toml")
	if r.err != nil || r.out != "trusted "+abs+" sha256:"+config.Sum(data)+"\n" {
		t.Fatalf("config trust: %v\n%s%s", r.err, r.out, r.errOut)
	}
	got, r = targetOf(t, "status", "--json")
	if r.err != nil || got.Name != "here" || got.ManagementURL != "http://here.example:15672" || r.errOut != "" {
		t.Fatalf("after trust: %v, context %q, stderr %q", r.err, got.Name, r.errOut)
	}

	writeFile(t, "warren.toml", "[contexts.here]\nmanagement_url = \"http://evil.example:15672\"\n")
	got, r = targetOf(t, "status", "--json")
	if r.err != nil || got.Name != "mine" || !strings.Contains(r.errOut, "changed since you trusted it") || strings.Count(r.errOut, "\n") != 1 {
		t.Fatalf("after a change: %v, context %q, stderr %q", r.err, got.Name, r.errOut)
	}
	// Named with --config, no trust is asked for.
	got, r = targetOf(t, "--config", "warren.toml", "status", "--json")
	if r.err != nil || got.ManagementURL != "http://evil.example:15672" || r.errOut != "" {
		t.Fatalf("--config warren.toml: %v, %+v, stderr %q", r.err, got, r.errOut)
	}
}

func TestATrustedWorkingDirectoryConfigMayNotChooseThePasswordsVariable(t *testing.T) {
	trustHere(t)
	t.Setenv("WARREN_TRUST_TEST_SECRET", "not-for-a-broker")
	writeFile(t, "warren.toml", "[contexts.x]\nmanagement_url = \"http://evil.example:15672\"\npassword_env = \"WARREN_TRUST_TEST_SECRET\"\n")
	r := execCLI(t, "config", "trust", "./warren.toml")
	if r.err != nil || !strings.Contains(r.out, "trusted ") ||
		!strings.Contains(r.out, "note: warren will still refuse it: ./warren.toml:3: contexts.x.password_env is refused") {
		t.Fatalf("config trust: %v\n%s%s", r.err, r.out, r.errOut)
	}
	got, r := targetOf(t, "status")
	if got != nil || r.code() != app.ExitRefused {
		t.Fatalf("status over a trusted file naming password_env: exit %d, target %+v", r.code(), got)
	}
	for _, want := range []string{"contexts.x.password_env is refused", `"WARREN_TRUST_TEST_SECRET"`, "your own config (", "--config ./warren.toml"} {
		if !strings.Contains(r.errOut, want) {
			t.Fatalf("refusal lacks %q:\n%s", want, r.errOut)
		}
	}
	if strings.Contains(r.out+r.errOut, "not-for-a-broker") {
		t.Fatal("the variable's value was printed")
	}
	got, r = targetOf(t, "--config", "./warren.toml", "status")
	if r.err != nil || got.PasswordEnv != "WARREN_TRUST_TEST_SECRET" {
		t.Fatalf("the same file with --config: %v", r.err)
	}
}

func TestConfigTrustRefusesAFileThatDoesNotLoad(t *testing.T) {
	trustHere(t)
	writeFile(t, "warren.toml", "[contexts.x]\nrefresh = 5\n")
	r := execCLI(t, "config", "trust")
	if r.code() != app.ExitUsage || !strings.Contains(r.errOut, "contexts.x.refresh must be a duration") || !strings.Contains(r.errOut, "nothing was trusted") {
		t.Fatalf("config trust of a broken file: exit %d, stderr %q", r.code(), r.errOut)
	}
	if p, _ := config.TrustFile(); fileExists(p) {
		t.Fatal("a file that does not load was trusted")
	}
	r = execCLI(t, "config", "trust", "absent.toml")
	if r.code() != app.ExitUsage || !strings.Contains(r.errOut, "absent.toml") {
		t.Fatalf("config trust of a missing file: exit %d, stderr %q", r.code(), r.errOut)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// initOffline runs config init's writing with targets nothing answers,
// so the check that follows fails fast; it returns what was printed.
func initOffline(t *testing.T, path string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &out}
	err := a.configInit(context.Background(), path, false, false,
		initAnswers{AMQPURL: "amqp://127.0.0.1:1/", ManagementURL: "http://127.0.0.1:1"})
	return out.String(), err
}

func TestConfigInitWritesTheUsersOwnConfigByDefault(t *testing.T) {
	own := trustHere(t)
	out, _ := initOffline(t, "")
	if !strings.HasPrefix(out, "wrote "+own+" (context local)\n") || strings.Contains(out, "trusted") {
		t.Fatalf("config init without --path:\n%s", out)
	}
	l, err := config.Locate("")
	if err != nil || l.Path != own || !l.Own {
		t.Fatalf("the written config is not the one read: %+v %v", l, err)
	}
	if _, err := l.Load(); err != nil {
		t.Fatalf("the written config, which names password_env, does not load: %v", err)
	}
}

func TestConfigInitTrustsTheWorkingDirectoryFileItWrites(t *testing.T) {
	trustHere(t)
	out, _ := initOffline(t, "warren.toml")
	abs, _ := filepath.Abs("warren.toml")
	data, _ := os.ReadFile("warren.toml")
	if !strings.Contains(out, "wrote warren.toml (context local)\ntrusted "+abs+" sha256:"+config.Sum(data)+"\n") ||
		strings.Contains(out, "will still refuse") {
		t.Fatalf("config init --path warren.toml:\n%s", out)
	}
	l, err := config.Locate("")
	if err != nil || l.Path != "warren.toml" || len(l.Ignored) != 0 {
		t.Fatalf("the written file is not trusted: %+v %v", l, err)
	}
	// It names no password source, which a project's file may not: it
	// loads as found in the directory, and its password is
	// WARREN_PASSWORD's.
	f, err := l.Load()
	if err != nil {
		t.Fatalf("the written ./warren.toml does not load as found: %v", err)
	}
	c, err := f.Context("")
	if err != nil || c.PasswordEnv != "" || c.PasswordFile != "" || !strings.Contains(string(data), "The password comes from WARREN_PASSWORD") {
		t.Fatalf("the written ./warren.toml: %+v (%v)\n%s", c, err, data)
	}
}

func TestTheDashboardsHeaderSaysAWorkingDirectoryConfigWasIgnored(t *testing.T) {
	trustHere(t)
	writeFile(t, "warren.toml", "[contexts.here]\n")
	var errOut bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errOut}
	// As RunDashboard does: the config first, then the program.
	if _, err := a.Factory().Config(); err != nil {
		t.Fatal(err)
	}
	if errOut.String() != ignoredNotice {
		t.Fatalf("before the dashboard starts: %q", errOut.String())
	}
	errOut.Reset()
	model, release, err := a.Factory().Dashboard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	model, _ = model.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	head, _, _ := strings.Cut(model.View(), "\n")
	if !strings.Contains(head, "no config: local broker ./warren.toml ignored: not trusted") {
		t.Fatalf("header %q", head)
	}
	if errOut.Len() != 0 {
		t.Fatalf("the dashboard printed on the terminal it draws on: %q", errOut.String())
	}
}
