package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newDlqStatsCmd(a *App) *cobra.Command {
	var f readFlags
	cmd := &cobra.Command{
		Use:   "stats QUEUE",
		Short: "Scan a whole DLQ for attempts, reasons, origins, replay loops and ages (no bodies kept)",
		Args:  oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, t, st, err := a.scanDLQ(cmd.Context(), args[0], f, false)
			if err != nil {
				return err
			}
			defer o.Close()
			if f.asJSON {
				return writeJSON(a.Out, statsJSONOf(st))
			}
			fmt.Fprintf(a.Out, "%s: %s, %s, scanned in %s (%s)\n",
				sanitize.Text(t.Ref.Name), format.Messages(st.Total), format.Bytes(st.Bytes), format.Elapsed(st.Took), completeness(st))
			fmt.Fprintf(a.Out, "dead-lettered between %s and %s", format.Time(st.OldestDeadLettered), format.Time(st.NewestDeadLettered))
			if st.NoTime > 0 {
				fmt.Fprintf(a.Out, " (%d without a time)", st.NoTime)
			}
			fmt.Fprintf(a.Out, "\nreplay loops %d, quarantined %d\n", st.ReplayLoops, st.Quarantined)
			fmt.Fprintf(a.Out, "conventions %s; %s (dlq groups lists them)\n", countsText(st.Conventions), format.Plural(st.Groups.Len(), "failure group"))
			writeHistText(a.Out, st.Attempts, st.Reasons, st.Origins)
			return nil
		},
	}
	addReadFlags(cmd, &f)
	return cmd
}

// scanDLQ reads the whole DLQ for statistics, with progress on a
// terminal and the scan's notes on stderr; groupIDs keeps each failure
// group's business IDs for its inbox counts. A guard refusal exits 3.
// The caller closes the operations layer.
func (a *App) scanDLQ(ctx context.Context, queue string, f readFlags, groupIDs bool) (*ops.Ops, *ops.Target, *domain.Stats, error) {
	// A scan keeps no bodies: its heap stays small, and collecting at
	// every doubling of it held the scan to 0.8 of a plain consumer. Set
	// before anything is read, as GOGC in the environment would be.
	defer bulkMemory()()
	o, t, err := a.dlqTarget(ctx, queue, f)
	if err != nil {
		return nil, nil, nil, err
	}
	t.Opts.GroupIDs = groupIDs && o.HasInbox(t.InboxOf)
	var progress func(int)
	if IsTerminal(a.Err) {
		progress = func(n int) { fmt.Fprintf(a.Err, "\rscanned %d of %d", n, t.Info.Messages) }
	}
	st, err := o.ScanTarget(ctx, t, progress)
	if progress != nil {
		fmt.Fprintln(a.Err)
	}
	if err != nil {
		o.Close()
		return nil, nil, nil, exitFor(err)
	}
	printNotes(a.Err, st.Notes)
	return o, t, st, nil
}

// completeness says whether a scan read every message the queue held at
// its start, and what became ready after that it did not count.
func completeness(st *domain.Stats) string {
	out := fmt.Sprintf("complete: %v", st.Complete)
	if st.Unread > 0 {
		out += fmt.Sprintf("; %d more ready since it started, not counted", st.Unread)
	}
	if st.Held > 0 {
		out += fmt.Sprintf("; %d held by another client, not counted", st.Held)
	}
	return out
}

type statsJSON struct {
	Total       int        `json:"total"`
	Expected    int        `json:"expected"`
	Complete    bool       `json:"complete"`
	Unread      int        `json:"unread"`
	Held        int        `json:"held"`
	Bytes       int64      `json:"bytes"`
	Histogram   histJSON   `json:"histogram"`
	ReplayLoops int        `json:"replay_loops"`
	Quarantined int        `json:"quarantined"`
	Oldest      *time.Time `json:"oldest_dead_lettered_at"`
	Newest      *time.Time `json:"newest_dead_lettered_at"`
	NoTime      int        `json:"without_time"`
	Seconds     float64    `json:"scan_seconds"`
	// Conventions counts the messages by the convention they were read
	// by; FailureGroups is how many groups they make (dlq groups lists
	// them). docs/ARCHITECTURE.md §4.12.
	Conventions   map[string]int `json:"conventions"`
	FailureGroups int            `json:"failure_groups"`
}

func statsJSONOf(st *domain.Stats) statsJSON {
	out := statsJSON{Total: st.Total, Expected: st.Expected, Complete: st.Complete, Unread: st.Unread, Held: st.Held, Bytes: st.Bytes,
		Histogram: histJSONOf(st.Attempts, st.Reasons, st.Origins), ReplayLoops: st.ReplayLoops,
		Quarantined: st.Quarantined, NoTime: st.NoTime, Seconds: round(st.Took.Seconds(), 3),
		Conventions: st.Conventions, FailureGroups: st.Groups.Len()}
	if !st.OldestDeadLettered.IsZero() {
		o, n := st.OldestDeadLettered.UTC(), st.NewestDeadLettered.UTC()
		out.Oldest, out.Newest = &o, &n
	}
	return out
}
