package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

func newLintCmd(a *App) *cobra.Command {
	var (
		asJSON bool
		vhost  string
	)
	var checks strings.Builder
	for _, c := range domain.Checks {
		fmt.Fprintf(&checks, "  %-28s %-8s %s\n", c.ID, c.Severity, c.Summary)
	}
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Check the dead-lettering topology for silent loss and hidden messages",
		Long: "Check every queue's dead-lettering (docs/ARCHITECTURE.md §4.7):\n\n" + checks.String() +
			"\nExit 1 when any finding is an error (messages are lost as configured), so a\n" +
			"runbook or CI can gate on it; warnings alone exit 0. Reads all vhosts unless\n" +
			"--vhost or the context's vhost names one.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.fullSnapshot(cmd, vhost)
			if err != nil {
				return err
			}
			findings := domain.Lint(s)
			if asJSON {
				err = writeLintJSON(a.Out, findings, len(s.Queues))
			} else {
				err = writeLintText(a.Out, findings, len(s.Queues))
			}
			if err != nil {
				return err
			}
			if n := countSeverity(findings, domain.SeverityError); n > 0 {
				return &app.ExitError{Code: app.ExitFailure, Err: fmt.Errorf("lint: %d error(s): dead letters can be lost", n)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: findings[] with check, severity, vhost, queue, message")
	cmd.Flags().StringVar(&vhost, "vhost", "", "only this vhost (default: the context's vhost, else all)")
	return cmd
}

func countSeverity(fs []domain.Finding, severity string) int {
	n := 0
	for _, f := range fs {
		if f.Severity == severity {
			n++
		}
	}
	return n
}

type lintJSON struct {
	Findings      []domain.Finding `json:"findings"`
	Errors        int              `json:"errors"`
	Warnings      int              `json:"warnings"`
	QueuesChecked int              `json:"queues_checked"`
}

func writeLintJSON(w io.Writer, fs []domain.Finding, queues int) error {
	if fs == nil {
		fs = []domain.Finding{}
	}
	return writeJSON(w, lintJSON{Findings: fs, Errors: countSeverity(fs, domain.SeverityError),
		Warnings: countSeverity(fs, domain.SeverityWarning), QueuesChecked: queues})
}

func writeLintText(w io.Writer, fs []domain.Finding, queues int) error {
	for _, f := range fs {
		if _, err := fmt.Fprintf(w, "%-7s %-26s %s/%s: %s\n", strings.ToUpper(f.Severity), f.Check,
			sanitize.Text(f.Vhost), sanitize.Text(f.Queue), sanitize.Text(f.Message)); err != nil {
			return err
		}
	}
	if len(fs) == 0 {
		_, err := fmt.Fprintf(w, "no findings in %d queue(s)\n", queues)
		return err
	}
	_, err := fmt.Fprintf(w, "%d finding(s) in %d queue(s): %d error(s), %d warning(s)\n", len(fs), queues,
		countSeverity(fs, domain.SeverityError), countSeverity(fs, domain.SeverityWarning))
	return err
}
