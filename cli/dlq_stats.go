package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/ui/format"
	"github.com/warrenops/warren/ui/sanitize"
)

func newDlqStatsCmd(a *App) *cobra.Command {
	var f readFlags
	cmd := &cobra.Command{
		Use:   "stats QUEUE",
		Short: "Scan a whole DLQ for attempts, reasons, origins, replay loops and ages (no bodies kept)",
		Args:  oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, t, err := a.dlqTarget(cmd.Context(), args[0], f)
			if err != nil {
				return err
			}
			defer o.Close()
			var progress func(int)
			if IsTerminal(a.Err) {
				progress = func(n int) { fmt.Fprintf(a.Err, "\rscanned %d of %d", n, t.Info.Messages) }
			}
			st, err := o.ScanTarget(cmd.Context(), t, progress)
			if progress != nil {
				fmt.Fprintln(a.Err)
			}
			var refused *dlq.RefusedError
			if errors.As(err, &refused) {
				return Refused(err)
			}
			if err != nil {
				return err
			}
			printNotes(a.Err, st.Notes)
			if f.asJSON {
				return writeJSON(a.Out, statsJSONOf(st))
			}
			fmt.Fprintf(a.Out, "%s: %d messages, %s, scanned in %s (complete: %v)\n",
				sanitize.Text(t.Ref.Name), st.Total, format.Bytes(st.Bytes), format.Elapsed(st.Took), st.Complete)
			fmt.Fprintf(a.Out, "dead-lettered between %s and %s", format.Time(st.OldestDeadLettered), format.Time(st.NewestDeadLettered))
			if st.NoTime > 0 {
				fmt.Fprintf(a.Out, " (%d without a time)", st.NoTime)
			}
			fmt.Fprintf(a.Out, "\nreplay loops %d, quarantined %d\n", st.ReplayLoops, st.Quarantined)
			writeHistText(a.Out, st.Attempts, st.Reasons, st.Origins)
			return nil
		},
	}
	addReadFlags(cmd, &f)
	return cmd
}

type statsJSON struct {
	Total       int        `json:"total"`
	Expected    int        `json:"expected"`
	Complete    bool       `json:"complete"`
	Bytes       int64      `json:"bytes"`
	Histogram   histJSON   `json:"histogram"`
	ReplayLoops int        `json:"replay_loops"`
	Quarantined int        `json:"quarantined"`
	Oldest      *time.Time `json:"oldest_dead_lettered_at"`
	Newest      *time.Time `json:"newest_dead_lettered_at"`
	NoTime      int        `json:"without_time"`
	Seconds     float64    `json:"scan_seconds"`
}

func statsJSONOf(st *dlq.Stats) statsJSON {
	out := statsJSON{Total: st.Total, Expected: st.Expected, Complete: st.Complete, Bytes: st.Bytes,
		Histogram: histJSONOf(st.Attempts, st.Reasons, st.Origins), ReplayLoops: st.ReplayLoops,
		Quarantined: st.Quarantined, NoTime: st.NoTime, Seconds: round(st.Took.Seconds(), 3)}
	if !st.OldestDeadLettered.IsZero() {
		o, n := st.OldestDeadLettered.UTC(), st.NewestDeadLettered.UTC()
		out.Oldest, out.Newest = &o, &n
	}
	return out
}
