package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
)

// noConfigHere leaves the test in a directory and XDG home without a
// config file.
func noConfigHere(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

// targetOf runs args over a fake management API and returns the context
// the command was given.
func targetOf(t *testing.T, args ...string) (*config.Context, cliRun) {
	t.Helper()
	var got *config.Context
	var out, errOut bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &errOut,
		NewManagement: func(c *config.Context) (app.Management, error) {
			got = c
			return &fakeManagement{snap: unitSnapshot()}, nil
		}}
	return got, execCLIOn(t, a, &out, &errOut, args...)
}

func TestWithoutAConfigCommandsTargetTheLocalBroker(t *testing.T) {
	noConfigHere(t)
	got, r := targetOf(t, "status", "--json")
	if r.err != nil || got == nil {
		t.Fatalf("status without a config: %v", r.err)
	}
	if !got.NoConfig() || got.AMQPURL != config.LocalAMQPURL || got.ManagementURL != config.LocalManagementURL || got.Username != "guest" {
		t.Fatalf("target without a config: %+v", got)
	}
	if !strings.Contains(r.out, `"orders"`) {
		t.Fatalf("status printed no queues:\n%s", r.out)
	}
}

func TestOneOffTargetFlags(t *testing.T) {
	cases := []struct {
		name      string
		withFile  bool
		args      []string
		wantAMQP  string
		wantMgmt  string
		wantUser  string
		wantWhere string
	}{
		{"no config, no flags", false, nil, config.LocalAMQPURL, config.LocalManagementURL, "guest", "local broker"},
		{"no config, every flag", false, []string{"--amqp-url", "amqps://b:5671/", "--management-url", "https://b:15671", "--username", "ops"},
			"amqps://b:5671/", "https://b:15671", "ops", "b:15671"},
		{"no config, the AMQP URL alone", false, []string{"--amqp-url", "amqp://rabbit-b:5672/"},
			"amqp://rabbit-b:5672/", "http://rabbit-b:15672", "guest", "rabbit-b:15672"},
		{"a config's context, overridden", true, []string{"--management-url", "http://other:15672", "--username", "ops"},
			"amqp://other:5672/", "http://other:15672", "ops", "unit"},
		{"a config's context as it is", true, nil, "amqp://127.0.0.1:1/", "http://127.0.0.1:1", "guest", "unit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			noConfigHere(t)
			args := tc.args
			if tc.withFile {
				args = append([]string{"--config", unitConfig(t, "")}, args...)
			}
			got, r := targetOf(t, append(args, "status")...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got.AMQPURL != tc.wantAMQP || got.ManagementURL != tc.wantMgmt || got.Username != tc.wantUser || got.Where() != tc.wantWhere {
				t.Fatalf("target %s %s %s %q", got.AMQPURL, got.ManagementURL, got.Username, got.Where())
			}
		})
	}
}

func TestBadTargetFlagsAreUsageErrors(t *testing.T) {
	noConfigHere(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--amqp-url", "rabbit:5672", "status"}, "--amqp-url must be an amqp:// or amqps:// URL"},
		{[]string{"--management-url", "ftp://h", "status"}, "--management-url must be an http:// or https:// URL"},
		{[]string{"--amqp-url", "amqp://ops:hunter2@h/", "status"}, "--amqp-url must not contain a password"},
		{[]string{"--context", "prod", "status"}, "--context prod: no config file found"},
	}
	for _, tc := range cases {
		_, r := targetOf(t, tc.args...)
		if r.code() != app.ExitUsage || !strings.Contains(r.errOut, tc.want) || strings.Contains(r.errOut, "hunter2") {
			t.Errorf("warren %v: exit %d, stderr %q; want exit 2 saying %q", tc.args, r.code(), r.errOut, tc.want)
		}
	}
}

func TestWrittenConfigParsesToWhatWasAnswered(t *testing.T) {
	ans := initAnswers{Context: "lab-1", AMQPURL: "amqps://rabbit:5671/", ManagementURL: "https://rabbit:15671",
		Username: `o"dd\user` + "\n", PasswordEnv: "LAB_PW", Environment: "prod"}
	text := renderConfig(ans)
	f, err := config.Parse("init.toml", []byte(text))
	if err != nil {
		t.Fatalf("config init wrote a config warren cannot read: %v\n%s", err, text)
	}
	c, err := f.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "lab-1" || c.AMQPURL != ans.AMQPURL || c.ManagementURL != ans.ManagementURL || c.Username != ans.Username ||
		c.PasswordEnv != "LAB_PW" || !c.IsProd() || c.Refresh.Duration != config.DefaultRefresh {
		t.Fatalf("read back %+v", c)
	}
	// Shaped like config.example.toml: the same keys, commented.
	example, err := os.ReadFile(filepath.Join("..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"# The context used when --context is not given.",
		"# AMQP endpoint (amqp:// or amqps://). No password here: see password_env.",
		"read_only = false               # true removes the action keys and refuses changing commands",
		`refresh = "2s"                  # how often the views refresh (at least 200ms)`,
	} {
		if !strings.Contains(text, line) || !strings.Contains(string(example), line) {
			t.Errorf("the written config and config.example.toml do not share %q", line)
		}
	}
}

func TestConfigInitAsksOnATerminal(t *testing.T) {
	// Context from the flag; an empty answer takes the default; a wrong
	// answer is asked again; the management URL follows the AMQP host.
	want := initAnswers{Context: "b", AMQPURL: "amqp://rabbit-b:5672/", ManagementURL: "http://rabbit-b:15672",
		Username: "guest", PasswordEnv: "WARREN_PASSWORD", Environment: "staging"}
	in := strings.NewReader("amqp://rabbit-b:5672/\n\n\n\nproduction\nstaging\n")
	var out bytes.Buffer
	ans, err := askInit(in, &out, initAnswers{Context: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if ans != want {
		t.Fatalf("answers %+v, want %+v", ans, want)
	}
	for _, prompt := range []string{"AMQP URL [amqp://localhost:5672/]: ", "Management API URL [http://rabbit-b:15672]: ",
		"Environment (dev, staging, prod) [dev]: ", `the answer must be dev, staging or prod, found "production"`} {
		if !strings.Contains(out.String(), prompt) {
			t.Fatalf("dialogue lacks %q:\n%s", prompt, out.String())
		}
	}
	if strings.Contains(out.String(), "Context name") {
		t.Fatal("asked for a value the flags gave")
	}
}

func TestConfigInitStopsWhenInputEnds(t *testing.T) {
	_, err := askInit(strings.NewReader("amqp://h:5672/\n"), &bytes.Buffer{}, initAnswers{})
	if app.ExitCode(err) != app.ExitUsage || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("ended input: %v", err)
	}
}

func TestConfigInitNeverQuotesWhatMayBeAPassword(t *testing.T) {
	_, err := fillInit(initAnswers{PasswordEnv: "hunter2!"})
	if app.ExitCode(err) != app.ExitUsage || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--password-env must be the name of an environment variable") {
		t.Fatalf("password given as the variable's name: %v", err)
	}
	_, err = fillInit(initAnswers{AMQPURL: "amqp://ops:hunter2@h/"})
	if app.ExitCode(err) != app.ExitUsage || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--amqp-url must not contain a password") {
		t.Fatalf("password in the URL: %v", err)
	}
}

func TestConfigInitRefusesToOverwriteBeforeAsking(t *testing.T) {
	noConfigHere(t)
	own := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "warren", "config.toml")
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &out}
	err := a.configInit(context.Background(), "", false, true, initAnswers{})
	if app.ExitCode(err) != app.ExitRefused || !strings.Contains(err.Error(), own+" already exists; pass --force") {
		t.Fatalf("init over the user's own config: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("asked before refusing:\n%s", out.String())
	}
	if b, _ := os.ReadFile(own); string(b) != "# mine\n" {
		t.Fatal("the file changed")
	}
}
