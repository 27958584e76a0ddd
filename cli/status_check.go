package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// `warren status --check` (docs/ARCHITECTURE.md §5.1): the overview's
// judgements for monitoring. A context's queues are read a few times
// over --window, judged as the overview judges them (format.Assess, the
// marks of domain/trouble), and each finding printed on a line; the exit
// code is the worst of them: 0 nothing in trouble, 1 worth a look, 2 act
// now, as Nagios-style checks read it.

// DefaultCheckWindow is how long --check watches a context.
const DefaultCheckWindow = 10 * time.Second

// checkSamples is how many snapshots a check reads over its window: the
// growth judgements need three at least.
const checkSamples = 5

// finding is one line of a check.
type finding struct {
	level   format.Level
	context string
	where   string // vhost/queue, a node, or "" for the context
	reasons []string
	// What where names, for --json: the queue (zero when the finding
	// is not a queue's) or the node ("" when not a node's).
	queue domain.QueueRef
	node  string
}

// checkJSON is `status --check --json` (docs/ARCHITECTURE.md §5.4): the
// findings, the worst first, and the level the exit code says.
type checkJSON struct {
	Level         string         `json:"level"`
	ExitCode      int            `json:"exit_code"`
	Findings      []checkFinding `json:"findings"`
	Contexts      int            `json:"contexts"`
	Queues        int            `json:"queues"`
	WindowSeconds float64        `json:"window_seconds"`
}

// checkFinding is one finding: a queue's (vhost and queue), a node's
// (node), or a context's that could not be judged (neither).
type checkFinding struct {
	Level   string   `json:"level"`
	Context string   `json:"context,omitempty"` // with --all-contexts
	Vhost   *string  `json:"vhost"`
	Queue   *string  `json:"queue"`
	Node    *string  `json:"node"`
	Reasons []string `json:"reasons"`
}

// levelWord is a level as --json says it: fine, worth_a_look, act_now.
func levelWord(l format.Level) string {
	return strings.ReplaceAll(l.String(), " ", "_")
}

// json is the finding as --json gives it; the context is named with
// --all-contexts, as the lines name it.
func (f finding) json(all bool) checkFinding {
	out := checkFinding{Level: levelWord(f.level), Reasons: f.reasons}
	if all {
		out.Context = f.context
	}
	if f.queue.Name != "" {
		vhost, queue := f.queue.Vhost, f.queue.Name
		out.Vhost, out.Queue = &vhost, &queue
	}
	if f.node != "" {
		node := f.node
		out.Node = &node
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	return out
}

// line is the finding as printed; with contextWidth above 0 the
// context is named, in a column that wide.
func (f finding) line(contextWidth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s ", f.level)
	if contextWidth > 0 {
		name := sanitize.Text(f.context)
		b.WriteString(name + strings.Repeat(" ", max(contextWidth-ansi.StringWidth(name), 0)) + "  ")
	}
	if f.where != "" {
		b.WriteString(sanitize.Text(f.where) + ": ")
	}
	// Reasons are sanitised where they are made (format.Assess, the
	// alarms, the errors below): escaping them again would double the
	// backslashes of the escapes they hold.
	b.WriteString(strings.Join(f.reasons, "; "))
	return b.String()
}

// runCheck judges the context (or every context) and prints the
// findings, as lines or, asJSON, as one document.
func (a *App) runCheck(ctx context.Context, vhost string, vhostSet bool, window time.Duration, all, asJSON bool) error {
	if window < 2*time.Second {
		return app.Usage(fmt.Errorf("--window %s: want at least 2s, for the samples the judgements need", window))
	}
	names := []string{""}
	if all {
		if _, err := a.Factory().Config(); err != nil {
			return err
		}
		f := a.Factory().ConfigFile()
		if f == nil {
			return app.Usage(errors.New("--all-contexts needs a config file with contexts: none was found"))
		}
		names = f.ContextNames()
	}
	results := make([][]finding, len(names))
	queues := make([]int, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], queues[i] = a.checkContext(ctx, name, vhost, vhostSet, window)
		}()
	}
	wg.Wait()
	var found []finding
	worst, total := format.Fine, 0
	for i := range results {
		total += queues[i]
		for _, f := range results[i] {
			found = append(found, f)
			worst = max(worst, f.level)
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].level > found[j].level })
	if asJSON {
		out := checkJSON{Level: levelWord(worst), ExitCode: int(worst), Findings: make([]checkFinding, 0, len(found)),
			Contexts: len(names), Queues: total, WindowSeconds: window.Seconds()}
		for _, f := range found {
			out.Findings = append(out.Findings, f.json(all))
		}
		if err := writeJSON(a.Out, out); err != nil {
			return err
		}
		return checkExit(worst)
	}
	width := 0 // the contexts' column, when there are several
	if all {
		for _, f := range found {
			width = max(width, ansi.StringWidth(sanitize.Text(f.context)))
		}
	}
	for _, f := range found {
		fmt.Fprintln(a.Out, f.line(width))
	}
	if worst == format.Fine {
		fmt.Fprintf(a.Out, "ok: nothing in trouble (%s in %s, judged over %s)\n", format.Plural(total, "queue"), format.Plural(len(names), "context"), format.Duration(window))
	}
	return checkExit(worst)
}

// checkExit is the check's exit code, with nothing more to print.
func checkExit(l format.Level) error {
	if l == format.Fine {
		return nil
	}
	return app.Quiet(int(l))
}

// checkContext reads one context checkSamples times over window and
// judges its queues; a context that cannot be read is a finding to act
// on. name "" is the selected context.
func (a *App) checkContext(ctx context.Context, name, vhost string, vhostSet bool, window time.Duration) ([]finding, int) {
	f := a.Factory()
	if name != "" {
		// Each context as its config says: a one-off target from the
		// flags names one broker, not every context's.
		f = app.New(app.Settings{ConfigPath: a.ConfigPath, ContextName: name, ReadOnly: true,
			NewManagement: a.NewManagement, Err: io.Discard})
	}
	label := name
	fail := func(err error) ([]finding, int) {
		return []finding{{level: format.ActNow, context: label, reasons: []string{"cannot be judged: " + oneLine(sanitize.Message(err.Error()))}}}, 0
	}
	c, m, err := f.Management()
	if err != nil {
		return fail(err)
	}
	if label == "" {
		label = c.Name
	}
	if !vhostSet {
		vhost = c.Vhost
	}
	judge := trouble.New(window)
	step := window / (checkSamples - 1)
	var snap *domain.Snapshot
	for i := range checkSamples {
		if i > 0 {
			select {
			case <-time.After(step):
			case <-ctx.Done():
				return fail(ctx.Err())
			}
		}
		rctx, cancel := context.WithTimeout(ctx, max(step, 5*time.Second))
		s, err := m.Snapshot(rctx, domain.SnapshotOptions{Vhost: vhost, AllRates: true})
		cancel()
		if err != nil {
			return fail(fmt.Errorf("the management API did not answer: %w", err))
		}
		judge.Observe(s.TakenAt, s.Queues)
		snap = s
	}
	alarms := format.NodeAlarms(snap.Nodes)
	var out []finding
	for n, alarm := range alarms {
		out = append(out, finding{level: format.ActNow, context: label, where: "node " + n, reasons: []string{alarm}, node: n})
	}
	for _, q := range snap.Queues {
		// A node's alarm is its own line, not every queue's.
		level, reasons := format.Assess(q, judge.Marks(q.Ref()), window, "")
		if level == format.Fine {
			continue
		}
		out = append(out, finding{level: level, context: label, where: strings.TrimSuffix(q.Vhost, "/") + "/" + q.Name, reasons: reasons, queue: q.Ref()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].where < out[j].where })
	return out, len(snap.Queues)
}

// addCheckFlags adds --check, --window and --all-contexts to status.
func addCheckFlags(cmd *cobra.Command, check *bool, window *time.Duration, all *bool) {
	fl := cmd.Flags()
	fl.BoolVar(check, "check", false, "judge the queues as the overview does, one line per finding (--json: one document); exit 0 nothing in trouble, 1 worth a look, 2 act now")
	fl.DurationVar(window, "window", DefaultCheckWindow, "with --check: how long to watch (five reads), since growth is judged over time")
	fl.BoolVar(all, "all-contexts", false, "with --check or --json: every context of the config, in parallel (--json exits 1 if one did not answer)")
}

// fleetJSON is `status --all-contexts --json`: a row per context, from
// one read of each. One read shows no rise, so it says so rather than
// let a script read "not growing": each row's dlq_growth is null, and
// GrowthJudged (false) and Note say that in_trouble leaves out what only
// a rise over time shows, which `status --check --all-contexts` judges.
type fleetJSON struct {
	Contexts     []domain.FleetRow `json:"contexts"`
	GrowthJudged bool              `json:"growth_judged"`
	Note         string            `json:"note"`
}

// oneReadNote is fleetJSON's Note.
const oneReadNote = "one read of each context: dlq_growth is null (unknown), and in_trouble leaves out what only a rise over time shows " +
	"(a DLQ growing, dead letters arriving, a DLX backlog or a queue growing); " +
	"`warren status --check --all-contexts --window 10s` judges those"

// writeFleetJSON reads every context once, in parallel, and prints a
// row per context; one that does not answer has its error, and the
// command exits 1 once every row is printed, as a broker error does
// (a script's `&&` stops there; the rows of the others are all there).
func (a *App) writeFleetJSON(ctx context.Context) error {
	fl, err := app.NewFleet(a.fleetSettings())
	if err != nil {
		return err
	}
	rows := fl.ReadAll(ctx, app.DefaultFleetTimeout)
	if err := writeJSON(a.Out, fleetJSON{Contexts: rows, Note: oneReadNote}); err != nil {
		return err
	}
	var silent []string
	for _, r := range rows {
		if r.Err != "" {
			silent = append(silent, sanitize.Text(r.Context))
		}
	}
	if len(silent) > 0 {
		return fmt.Errorf("%d of the %d contexts did not answer (%s): their rows carry the error, the others were read", len(silent), len(rows), strings.Join(silent, ", "))
	}
	return nil
}

// fleetSettings are the settings every context of the fleet is read
// with: the config, and the management client a test injects.
func (a *App) fleetSettings() app.Settings {
	return app.Settings{ConfigPath: a.ConfigPath, NewManagement: a.NewManagement, Err: a.Err}
}

// oneLine keeps a sanitised message on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
}
