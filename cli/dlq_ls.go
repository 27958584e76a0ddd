package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newDlqLsCmd(a *App) *cobra.Command {
	var (
		f      readFlags
		filter string
		group  string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "ls QUEUE",
		Short: "List a DLQ's messages: why they died, where from, attempts, inbox status",
		Long: "Browse QUEUE without harm (docs/ARCHITECTURE.md §4.3): each message is held for a moment and\n" +
			"returned, so the queue keeps its depth and order. Each line gives the logical ID,\n" +
			"the reason and origin of the last death, the attempt count, the age since it was\n" +
			"dead-lettered and whether the inbox has applied its effect. A quorum DLQ with a\n" +
			"delivery limit is refused (exit 3) where a browse would count against that limit.",
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > dlq.MaxHeld {
				return app.Usage(fmt.Errorf("--limit %d: want 1 to %d", limit, dlq.MaxHeld))
			}
			if group != "" {
				src, err := domain.GroupFilter(filter, group)
				if err != nil {
					return app.Usage(err)
				}
				filter = src
			}
			var flt *domain.Filter
			if filter != "" {
				var err error
				if flt, err = domain.CompileFilter(filter); err != nil {
					return app.Usage(err)
				}
			}
			l, t, err := a.list(cmd.Context(), args[0], f, flt, nil, limit)
			if err != nil {
				return err
			}
			printNotes(a.Err, l.notes)
			if f.asJSON {
				out := lsJSONOf(l.rows)
				out.Total, out.Expected, out.Complete = l.read, l.expected, l.complete
				return writeJSON(a.Out, out)
			}
			return writeLsText(a.Out, t, l.rows)
		},
	}
	addReadFlags(cmd, &f)
	cmd.Flags().StringVar(&filter, "filter", "", `only messages matching EXPR, e.g. 'reason == "rejected" && attempts >= 3 && applied == false'`)
	cmd.Flags().StringVar(&group, "group", "", "only the failure group ID (as dlq groups lists it)")
	cmd.Flags().IntVar(&limit, "limit", dlq.DefaultWindow, "list at most N messages")
	return cmd
}

// listLetters is the browse shared by ls and show: open, page, look up,
// return everything to the queue.
func (a *App) listLetters(ctx context.Context, queue string, f readFlags, flt *domain.Filter, keep func(domain.DeadLetter) bool, limit int) ([]listed, []string, *ops.Target, error) {
	l, t, err := a.list(ctx, queue, f, flt, keep, limit)
	return l.rows, l.notes, t, err
}

// list is listLetters, saying how much of the queue it read.
func (a *App) list(ctx context.Context, queue string, f readFlags, flt *domain.Filter, keep func(domain.DeadLetter) bool, limit int) (listing, *ops.Target, error) {
	o, t, err := a.dlqTarget(ctx, queue, f)
	if err != nil {
		return listing{}, nil, err
	}
	defer o.Close()
	defer readMemory()()
	if flt == nil && keep == nil {
		t.Opts.Window = min(limit, dlq.DefaultWindow)
	}
	// A listing shows no body, dlq show only the message it shows: the
	// others are let go once read.
	t.Opts.KeepBody = func(domain.DeadLetter) bool { return false }
	if keep != nil {
		t.Opts.KeepBody = keep
	}
	sess, done, err := a.browse(ctx, o, t)
	if err != nil {
		return listing{}, nil, err
	}
	defer done()
	l, err := collectListing(ctx, sess, o.Pager(ctx, t.InboxOf), flt, keep, limit)
	return l, t, err
}

func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(w, "note:", sanitize.Text(n))
	}
}

// lsJSON is the stable `dlq ls --json` shape of docs/ARCHITECTURE.md §5.
// Total, Expected and Complete mean what they mean in `dlq stats --json`:
// the messages the browse read (listed or not: a filter's, the guard's),
// the queue's depth when it began (-1 for a stream), and whether it read
// every one of them without stopping at --limit before a message it
// would have listed. The histogram counts the listed messages.
type lsJSON struct {
	Total     int         `json:"total"`
	Expected  int         `json:"expected"`
	Complete  bool        `json:"complete"`
	Messages  []lsMessage `json:"messages"`
	Histogram histJSON    `json:"histogram"`
}

type lsMessage struct {
	MessageID      string     `json:"message_id"`
	LogicalID      string     `json:"logical_id"`
	Reason         string     `json:"reason"`
	OriginQueue    string     `json:"origin_queue"`
	OriginExchange string     `json:"origin_exchange"`
	RoutingKeys    []string   `json:"routing_keys"`
	Attempts       int        `json:"attempts"`
	DeadLetteredAt *time.Time `json:"dead_lettered_at"`
	Size           int        `json:"size"`
	Inbox          string     `json:"inbox"`
	Quarantined    bool       `json:"quarantined"`
	// The failure as its convention says (docs/ARCHITECTURE.md §4.12).
	Group            string `json:"group"`
	Convention       string `json:"convention"`
	ErrorType        string `json:"error_type"`
	ErrorMessage     string `json:"error_message"`
	OriginRoutingKey string `json:"origin_routing_key"`
}

type histJSON struct {
	Attempts map[string]int `json:"attempts"`
	Reasons  map[string]int `json:"reasons"`
	Origins  map[string]int `json:"origins"`
}

func lsMessageOf(r listed) lsMessage {
	m := lsMessage{MessageID: r.MessageID, LogicalID: r.LogicalID, Reason: r.Reason, OriginQueue: r.OriginQueue,
		OriginExchange: r.OriginExchange, RoutingKeys: r.RoutingKeys, Attempts: r.Attempts, Size: r.Size,
		Inbox: string(r.status), Quarantined: r.Quarantined, Group: r.Group, Convention: r.Failure.Convention,
		ErrorType: r.Failure.ErrorType, ErrorMessage: r.Failure.ErrorMessage, OriginRoutingKey: r.Failure.OriginRoutingKey}
	if m.OriginExchange == "" {
		m.OriginExchange = r.Failure.OriginExchange
	}
	if m.RoutingKeys == nil {
		m.RoutingKeys = []string{}
	}
	if !r.DeadLetteredAt.IsZero() {
		at := r.DeadLetteredAt.UTC()
		m.DeadLetteredAt = &at
	}
	return m
}

func lsJSONOf(rows []listed) lsJSON {
	out := lsJSON{Messages: make([]lsMessage, 0, len(rows))}
	h := domain.NewHistogram()
	for _, r := range rows {
		out.Messages = append(out.Messages, lsMessageOf(r))
		h.Add(r.DeadLetter)
	}
	out.Histogram = histJSONOf(h.Attempts, h.Reasons, h.Origins)
	return out
}

func histJSONOf(attempts map[int]int, reasons, origins map[string]int) histJSON {
	out := histJSON{Attempts: make(map[string]int, len(attempts)), Reasons: reasons, Origins: origins}
	for n, c := range attempts {
		out.Attempts[strconv.Itoa(n)] = c
	}
	return out
}

func writeLsText(w io.Writer, t *ops.Target, rows []listed) error {
	if len(rows) == 0 {
		// What another client holds, the session's notes said.
		fmt.Fprintf(w, "no messages listed from %s\n", sanitize.Text(t.Ref.Name))
		return nil
	}
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tLOGICAL ID\tREASON\tORIGIN\tATTEMPTS\tAGE\tSIZE\tINBOX\tGROUP\tFLAGS")
	h := domain.NewHistogram()
	hashed, undead := false, false
	for _, r := range rows {
		h.Add(r.DeadLetter)
		hashed = hashed || r.LogicalIDFrom == domain.IDHash
		undead = undead || !format.DeadLettered(r.DeadLetter)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Position, format.LogicalID(r.DeadLetter), format.Reason(r.DeadLetter),
			format.Origin(r.DeadLetter), r.Attempts, format.Age(now, r.DeadLetteredAt), format.Bytes(int64(r.Size)), r.status, r.Group, flagsText(r.DeadLetter))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s from %s (held briefly and returned)\n", format.Messages(len(rows)), sanitize.Text(t.Ref.Name))
	if hashed {
		// The mark means nothing without its legend, as on the DLQ screen.
		fmt.Fprintln(w, format.HashLegend)
	}
	if undead {
		fmt.Fprintln(w, format.NoDeathLegend)
	}
	writeHistText(w, h.Attempts, h.Reasons, h.Origins)
	return nil
}

func flagsText(d domain.DeadLetter) string {
	var f []string
	if d.Quarantined {
		f = append(f, "quarantined")
	}
	if d.ReplayCount > 0 {
		f = append(f, fmt.Sprintf("replayed %d× (loop?)", d.ReplayCount))
	}
	if d.Headroom >= 0 {
		f = append(f, fmt.Sprintf("headroom %d", d.Headroom))
	}
	if c := format.ClaimedMarks(d); c != "" {
		f = append(f, c)
	}
	return strings.Join(f, ", ")
}

func writeHistText(w io.Writer, attempts map[int]int, reasons, origins map[string]int) {
	keys := make([]int, 0, len(attempts))
	for n := range attempts {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, n := range keys {
		parts[i] = fmt.Sprintf("%d: %d", n, attempts[n])
	}
	fmt.Fprintf(w, "attempts  %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "reasons   %s\n", countsText(reasons))
	fmt.Fprintf(w, "origins   %s\n", countsText(origins))
}

// countsText lists counts largest first, names sanitised.
func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", sanitize.Text(k), m[k])
	}
	return strings.Join(parts, ", ")
}
