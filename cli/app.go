// Package cli holds warren's commands and the process entry (Main): each
// command parses its flags, takes its clients from the composition root
// (app.Factory), prompts and prints.
package cli

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"io"
	"os"

	"golang.org/x/term"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/ui/overview"
)

// App is what every command shares: the global flags, the streams to
// write to, and the composition root built from the flags.
type App struct {
	ConfigPath  string
	ContextName string
	ReadOnly    bool
	Operator    string
	Debug       string
	// AllContexts starts the dashboard on the fleet view.
	AllContexts bool
	// Target is a one-off target from --amqp-url, --management-url and
	// --username; it overrides the context, or the local broker when
	// there is no config file.
	Target config.Target

	// NewManagement, when set, replaces the context's management API
	// client for every command but the dashboard, so a command's own
	// logic runs in tests without a broker.
	NewManagement func(*config.Context) (app.Management, error)
	// Dial, when set, replaces the context's AMQP dial (tests).
	Dial func(vhost string) (*amqp.Connection, error)

	In  io.Reader
	Out io.Writer
	Err io.Writer

	f *app.Factory
	// views are how the operator left each context's overview, for its
	// dashboard built again in this process (back from the fleet view,
	// or the context switcher).
	views map[string]overview.Settings
	// terminal reports whether a stream is an interactive terminal;
	// IsTerminal unless a test answers for one.
	terminal func(any) bool
}

// isTerminal reports whether f is an interactive terminal, as a
// prompt needs.
func (a *App) isTerminal(f any) bool {
	if a.terminal != nil {
		return a.terminal(f)
	}
	return IsTerminal(f)
}

// NewApp returns an App writing to the process's streams.
func NewApp() *App { return &App{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// Factory is the composition root for the global flags as parsed: built
// on first use (after cobra parsed them), then the same for the run.
func (a *App) Factory() *app.Factory {
	if a.f == nil {
		a.f = app.New(app.Settings{
			ConfigPath: a.ConfigPath, ContextName: a.ContextName, ReadOnly: a.ReadOnly,
			Operator: a.Operator, Target: a.Target, NewManagement: a.NewManagement, Dial: a.Dial, Err: a.Err,
		})
	}
	return a.f
}

// IsTerminal reports whether f is an interactive terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
