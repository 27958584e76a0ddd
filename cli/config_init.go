package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
)

// initAnswers are what `config init` writes: never a secret, only the
// name of the variable that holds it.
type initAnswers struct {
	Context       string
	AMQPURL       string
	ManagementURL string
	Username      string
	PasswordEnv   string
	Environment   string
	// project is set for ./warren.toml, which may not name where a
	// secret comes from: its password is WARREN_PASSWORD's.
	project bool
}

func newConfigInitCmd(a *App) *cobra.Command {
	var (
		path        string
		force       bool
		passwordEnv string
		environment string
	)
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented config with one context, then check it",
		Long: "Writes a commented config with one context: the broker's AMQP and management URLs,\n" +
			"the user, the name of the environment variable holding the password (never the\n" +
			"password itself) and the environment. On a terminal it asks for each value the\n" +
			"flags leave out; otherwise it takes the flags and the local broker's defaults.\n" +
			"The global --context, --amqp-url, --management-url and --username give the values.\n" +
			"It refuses to overwrite a file unless --force is given (exit 3), then runs\n" +
			"`warren config check` on what it wrote.",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ans := initAnswers{
				Context:       a.ContextName,
				AMQPURL:       a.Target.AMQPURL,
				ManagementURL: a.Target.ManagementURL,
				Username:      a.Target.Username,
				PasswordEnv:   passwordEnv,
				Environment:   environment,
			}
			if path == "" {
				path = a.ConfigPath
			}
			return a.configInit(cmd.Context(), path, force, IsTerminal(a.In), ans)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "path", "", "file to write (default: --config, else your own config, $XDG_CONFIG_HOME/warren/config.toml, "+
		"read from any directory; "+config.Candidates()[0]+" is trusted as written)")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	f.StringVar(&passwordEnv, "password-env", "", "name of the environment variable holding the password (default "+config.LocalPasswordEnv+")")
	f.StringVar(&environment, "environment", "", "dev, staging or prod (default dev; prod shows a red banner and asks to type queue name and count)")
	return cmd
}

// configInit writes the config at path (or the user's own config) and
// checks it. On a terminal the values the flags left out are asked for;
// otherwise they take the local broker's defaults. The user's own config
// is the default because the file names password_env, which a config
// found in the working directory may not; one written there is trusted
// as written.
func (a *App) configInit(ctx context.Context, path string, force, interactive bool, ans initAnswers) error {
	if path == "" {
		c := config.Candidates()
		path = c[len(c)-1]
	}
	if !force {
		if _, err := os.Stat(path); err == nil {
			return app.Refused(fmt.Errorf("%s already exists; pass --force to overwrite it, or --path FILE to write another", path))
		}
	}
	project := isProjectConfig(path)
	if project && ans.PasswordEnv != "" && ans.PasswordEnv != config.LocalPasswordEnv {
		return app.Usage(fmt.Errorf("--password-env %s: %s may not name where a secret comes from, so its password is always %s's; drop --password-env, or write your own config (leave out --path)",
			ans.PasswordEnv, path, config.LocalPasswordEnv))
	}
	var err error
	if interactive {
		ans, err = askInit(a.In, a.Out, ans)
	} else {
		ans, err = fillInit(ans)
	}
	if err != nil {
		return err
	}
	ans.project = project
	if err := writeConfig(path, renderConfig(ans), force); err != nil {
		return err
	}
	fmt.Fprintf(a.Out, "wrote %s (context %s)\n", path, ans.Context)
	if err := a.trustWritten(path); err != nil {
		return &app.ExitError{Code: app.ExitCode(err), Err: fmt.Errorf("%s was written, but %w", path, err)}
	}
	// Check what was written, not what the flags said.
	a.ConfigPath, a.ContextName, a.Target = path, "", config.Target{}
	a.f = nil // the next use builds the factory over what was written
	if err := a.configCheck(ctx); err != nil {
		return &app.ExitError{Code: app.ExitCode(err), Err: fmt.Errorf("%s was written, but %w", path, err)}
	}
	return nil
}

var (
	contextName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// fillInit checks every answer, filling a default for one left empty.
// It returns the first fault as one sentence naming the flag.
func fillInit(ans initAnswers) (initAnswers, error) {
	for _, q := range initQuestions {
		v := q.get(&ans)
		if *v == "" {
			*v = q.def(ans)
		}
		if err := q.check(*v); err != nil {
			return ans, app.Usage(fmt.Errorf("--%s %w", q.flag, err))
		}
	}
	return ans, nil
}

// initQuestion is one value `config init` asks for.
type initQuestion struct {
	flag, prompt string
	get          func(*initAnswers) *string
	def          func(initAnswers) string
	check        func(string) error
}

var initQuestions = []initQuestion{
	{"context", "Context name", func(a *initAnswers) *string { return &a.Context },
		func(initAnswers) string { return "local" },
		func(v string) error {
			if !contextName.MatchString(v) {
				return fmt.Errorf("must be a name of letters, digits, - and _ (it becomes [contexts.NAME]), found %q", v)
			}
			return nil
		}},
	{"amqp-url", "AMQP URL", func(a *initAnswers) *string { return &a.AMQPURL },
		func(initAnswers) string { return config.LocalAMQPURL },
		func(v string) error { return checkTarget(config.Target{AMQPURL: v}) }},
	{"management-url", "Management API URL", func(a *initAnswers) *string { return &a.ManagementURL },
		func(ans initAnswers) string {
			// The management API on the AMQP URL's host, as a one-off
			// target takes it.
			c := config.Local()
			if c.Apply(config.Target{AMQPURL: ans.AMQPURL}) != nil {
				return config.LocalManagementURL
			}
			return c.ManagementURL
		},
		func(v string) error { return checkTarget(config.Target{ManagementURL: v}) }},
	{"username", "Username", func(a *initAnswers) *string { return &a.Username },
		func(initAnswers) string { return config.LocalUsername },
		func(v string) error {
			if strings.TrimSpace(v) == "" {
				return errors.New("must be a user name, found only spaces")
			}
			return nil
		}},
	{"password-env", "Environment variable holding the password", func(a *initAnswers) *string { return &a.PasswordEnv },
		func(initAnswers) string { return config.LocalPasswordEnv },
		func(v string) error {
			// Never quote it: someone may have typed the password here.
			if !envName.MatchString(v) {
				return errors.New("must be the name of an environment variable (letters, digits and _), found something else; warren never writes the password itself")
			}
			return nil
		}},
	{"environment", "Environment (dev, staging, prod)", func(a *initAnswers) *string { return &a.Environment },
		func(initAnswers) string { return "dev" },
		func(v string) error {
			if v != "dev" && v != "staging" && v != "prod" {
				return fmt.Errorf("must be dev, staging or prod, found %q", v)
			}
			return nil
		}},
}

// checkTarget validates one URL the way --amqp-url and --management-url
// are, without the flag's name (the caller adds it).
func checkTarget(t config.Target) error {
	err := config.Local().Apply(t)
	if err == nil {
		return nil
	}
	_, rest, _ := strings.Cut(err.Error(), " ")
	return errors.New(rest)
}

// askInit asks, on the terminal, for each value the flags left out; an
// empty answer takes the default shown, a wrong one is asked again.
func askInit(in io.Reader, out io.Writer, ans initAnswers) (initAnswers, error) {
	sc := bufio.NewScanner(in)
	for _, q := range initQuestions {
		v := q.get(&ans)
		if *v != "" {
			continue
		}
		def := q.def(ans)
		for {
			fmt.Fprintf(out, "%s [%s]: ", q.prompt, def)
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return ans, err
				}
				return ans, app.Usage(errors.New("config init: input ended before every question was answered; nothing was written"))
			}
			got := strings.TrimSpace(sc.Text())
			if got == "" {
				got = def
			}
			if err := q.check(got); err != nil {
				fmt.Fprintf(out, "  the answer %v\n", err)
				continue
			}
			*v = got
			break
		}
	}
	return fillInit(ans)
}

// writeConfig writes text to path, creating its directory; without
// force it never replaces a file, even one created meanwhile.
func writeConfig(path, text string, force bool) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("config init: %w", err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return app.Refused(fmt.Errorf("%s already exists; pass --force to overwrite it, or --path FILE to write another", path))
	}
	if err != nil {
		return fmt.Errorf("config init: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("config init: writing %s: %w", path, err)
	}
	return f.Close()
}

// isProjectConfig reports whether path is ./warren.toml, the file a
// project carries, which may not say where a secret comes from.
func isProjectConfig(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	here, err := filepath.Abs(config.Candidates()[0])
	return err == nil && abs == here
}
