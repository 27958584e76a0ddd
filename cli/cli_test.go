package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/warrenops/warren/app"
)

// cliRoot is the command tree main.go builds; the dashboard itself is
// not run here.
func cliRoot(a *App) *cobra.Command {
	return NewRoot(a, func(*App) error { return errors.New("the dashboard does not run in these tests") })
}

// cliRun is what one command printed, with the error line main prints.
type cliRun struct {
	out, errOut string
	err         error
}

func (r cliRun) code() int { return app.ExitCode(r.err) }

// execCLI runs warren's command line in-process on a fresh App.
func execCLI(t *testing.T, args ...string) cliRun {
	t.Helper()
	var out, errOut bytes.Buffer
	return execCLIOn(t, &App{In: strings.NewReader(""), Out: &out, Err: &errOut}, &out, &errOut, args...)
}

func execCLIOn(t *testing.T, a *App, out, errOut *bytes.Buffer, args ...string) cliRun {
	t.Helper()
	root := cliRoot(a)
	root.SetArgs(args)
	root.SetOut(a.Out)
	root.SetErr(a.Err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(a.Err, "warren:", err.Error()+flagHint(err))
	}
	return cliRun{out: out.String(), errOut: errOut.String(), err: err}
}

// TestMain lets a test run this test binary as warren itself, with
// WARREN_TEST_AS_WARREN=1 in its environment, so a test can kill a real
// warren process mid-operation.
func TestMain(m *testing.M) {
	if os.Getenv("WARREN_TEST_AS_WARREN") == "1" {
		os.Exit(Main())
	}
	// warren keeps state (learned pairings, the default audit log) under
	// XDG_STATE_HOME: the tests keep theirs out of the user's.
	state, err := os.MkdirTemp("", "warren-cli-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("XDG_STATE_HOME") == "" {
		os.Setenv("XDG_STATE_HOME", state)
	}
	// The tests run many commands in one process, several at once: each
	// command builds its own management client (a clone of the default
	// transport), and their idle connections would pile up on the broker
	// until it runs out of file descriptors (RabbitMQ 3.10 failed to
	// start a vhost at 846 of them). A real command exits and closes them.
	http.DefaultTransport.(*http.Transport).DisableKeepAlives = true
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}
