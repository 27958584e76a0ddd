package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/text/sanitize"
)

func newConfigTrustCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Let warren read a config it finds in the working directory (default " + config.Candidates()[0] + "), as it is now",
		Long: "A config file in the working directory may have come with a cloned repository, so\n" +
			"warren reads it only once trusted: this records the file's absolute path and the\n" +
			"sha256 of its contents in warren's own state ($XDG_STATE_HOME/warren/trusted.json).\n" +
			"A file that changes must be trusted again. The file must load first. Even trusted,\n" +
			"such a file may not say where a secret comes from (password_env, password_file,\n" +
			"audit_dsn_env, dsn_env, dsn_file): that belongs in your own config, or in a file\n" +
			"named with --config.",
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			path := config.Candidates()[0]
			if len(args) == 1 {
				path = args[0]
			}
			return a.configTrust(path)
		},
	}
}

// configTrust records path as trusted and says what it recorded, and what
// warren will still refuse in it.
func (a *App) configTrust(path string) error {
	t, err := config.Trust(path)
	if err != nil {
		return app.Usage(err)
	}
	fmt.Fprintf(a.Out, "trusted %s sha256:%s\n", sanitize.Text(t.Path), t.SHA256)
	if filepath.Base(t.Path) != config.Candidates()[0] {
		fmt.Fprintf(a.Out, "note: warren looks for %s in the working directory; it reads this file only under that name, or with --config\n",
			config.Candidates()[0])
	}
	if t.Refused != nil {
		fmt.Fprintf(a.Out, "note: warren will still refuse it: %s\n", sanitize.Text(t.Refused.Error()))
	}
	return nil
}

// trustWritten trusts a config `config init` wrote where warren looks in
// the working directory, so the next run reads it.
func (a *App) trustWritten(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	here, err := filepath.Abs(config.Candidates()[0])
	if err != nil || abs != here {
		return err
	}
	return a.configTrust(path)
}
