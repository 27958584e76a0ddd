package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/sanitize"
)

func newDlqCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{Use: "dlq", Short: "Read dead-letter queues and act on their messages"}
	cmd.AddCommand(newDlqLsCmd(a), newDlqShowCmd(a), newDlqStatsCmd(a), newDlqReplayCmd(a), newDlqQuarantineCmd(a))
	return cmd
}

// readFlags are the flags every reading dlq command shares.
type readFlags struct {
	vhost     string
	allowRisk bool
	asJSON    bool
}

func addReadFlags(cmd *cobra.Command, f *readFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.vhost, "vhost", "", "vhost of QUEUE (default: the context's vhost, then /)")
	fl.BoolVar(&f.allowRisk, "allow-limit-risk", false, "browse a quorum DLQ whose delivery limit a browse would count against (see the refusal)")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON; values are exact, not sanitised")
}

// dlqTarget is one DLQ with what reading it needs.
type dlqTarget struct {
	vhost, name string
	info        dlq.QueueInfo
	opts        dlq.Options
	inboxOf     string // the queue whose inbox holds these messages' effects
	knows       config.Knowledge
}

// resolveDLQ reads the DLQ and its origin queues from one management
// snapshot: type, delivery limit, version, consumers, and the delivery
// limits of quorum origins (so their dead letters show every delivery).
func (a *App) resolveDLQ(ctx context.Context, queue string, f readFlags) (*dlqTarget, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	t := &dlqTarget{vhost: f.vhost, name: queue, inboxOf: queue}
	if t.vhost == "" {
		t.vhost = c.Vhost
	}
	if t.vhost == "" {
		t.vhost = "/"
	}
	m, err := a.Mgmt()
	if err != nil {
		return nil, err
	}
	s, err := m.Snapshot(ctx, mgmt.SnapshotOptions{Vhost: t.vhost})
	if err != nil {
		return nil, err
	}
	version := s.Overview.RabbitMQVersion
	byName := make(map[string]*mgmt.Queue, len(s.Queues))
	for i := range s.Queues {
		if s.Queues[i].Vhost == t.vhost {
			byName[s.Queues[i].Name] = &s.Queues[i]
		}
	}
	q := byName[queue]
	if q == nil {
		return nil, fmt.Errorf("queue %s not found in vhost %s", sanitize.Text(queue), sanitize.Text(t.vhost))
	}
	t.info = dlq.QueueInfo{Vhost: t.vhost, Name: queue, Type: q.Type, DeliveryLimit: q.DeliveryLimit(version),
		BrokerVersion: version, Consumers: q.Consumers, Messages: q.Messages}
	t.opts = dlq.Options{AllowLimitRisk: f.allowRisk, OriginDeliveryLimits: s.OriginDeliveryLimits(q.Ref())}
	sources := make([]string, 0, len(q.DLQOf))
	for _, ref := range q.DLQOf {
		sources = append(sources, ref.Name)
	}
	t.knows = c.Knowledge(t.vhost, queue, sources)
	t.opts.QuarantineQueue = t.knows.Parking
	if k := t.knows.Queue; k != nil {
		t.opts.LogicalID, t.opts.AttemptsHeader = k.LogicalID, k.AttemptsHeader
		t.inboxOf = k.Name
	}
	return t, nil
}

// browse opens a session on the target; a guard refusal exits 3.
func (a *App) browse(ctx context.Context, t *dlqTarget) (*dlq.Session, func(), error) {
	conn, err := a.DialAMQP(t.vhost)
	if err != nil {
		return nil, nil, err
	}
	sess, err := dlq.Open(ctx, conn, t.info, t.opts)
	var refused *dlq.RefusedError
	if errors.As(err, &refused) {
		conn.Close()
		return nil, nil, Refused(err)
	}
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return sess, func() {
		if err := sess.Close(); err != nil {
			fmt.Fprintf(a.Err, "warning: returning messages to %s: %v (the broker takes them back as the connection closes)\n", sanitize.Text(t.name), err)
		}
		conn.Close()
	}, nil
}

// openInbox opens the inbox these messages' effects land in; without
// one every status is unknown, with the reason.
func (a *App) openInbox(ctx context.Context, t *dlqTarget) *inbox.Pager {
	ib, err := a.Inbox(ctx, t.vhost, t.inboxOf)
	if err != nil {
		return inbox.NewPager(nil, err.Error())
	}
	if ib == nil {
		return inbox.NewPager(nil, "no inbox configured for "+t.inboxOf)
	}
	return inbox.NewPager(ib, "")
}

// businessIDs are the page's logical IDs to look up; a content hash is no
// business ID, so it is left empty (status unknown).
func businessIDs(letters []dlq.DeadLetter) []string {
	ids := make([]string, len(letters))
	for i, d := range letters {
		if d.LogicalIDFrom != dlq.IDHash {
			ids[i] = d.LogicalID
		}
	}
	return ids
}

// listed is one dead letter a command prints, with its inbox status.
type listed struct {
	dlq.DeadLetter
	status  inbox.Status
	applied time.Time
}

// collect pages through the session until limit letters match (or the
// queue ends), looking up each page's inbox statuses in one query.
func collect(ctx context.Context, sess *dlq.Session, ib *inbox.Pager, flt *dlq.Filter, keep func(dlq.DeadLetter) bool, limit int) ([]listed, []string, error) {
	var out []listed
	var notes []string
	refused, evalErrs, more := 0, 0, false
	var firstEval error
	now := time.Now()
	for len(out) < limit {
		page, err := sess.Next(ctx)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, page.Notes...)
		refused += len(page.Refused)
		st, found := ib.Statuses(ctx, businessIDs(page.Letters))
		for i, d := range page.Letters {
			if keep != nil && !keep(d) {
				continue
			}
			if len(out) == limit {
				more = true
				continue
			}
			if flt != nil {
				ok, err := flt.Match(d, st[i].Applied(), now)
				if err != nil {
					evalErrs++
					if firstEval == nil {
						firstEval = err
					}
				}
				if !ok {
					continue
				}
			}
			out = append(out, listed{DeadLetter: d, status: st[i], applied: found[d.LogicalID]})
		}
		if page.End {
			break
		}
		more = more || len(out) == limit
	}
	if more {
		notes = append(notes, fmt.Sprintf("--limit %d reached: the queue has more messages", limit))
	}
	if refused > 0 {
		notes = append(notes, fmt.Sprintf("%d messages not listed: the delivery-limit guard refused them (no headroom left)", refused))
	}
	if evalErrs > 0 {
		notes = append(notes, fmt.Sprintf("the filter could not be evaluated on %d messages, left out: %v", evalErrs, firstEval))
	}
	if r := ib.Reason(); r != "" {
		notes = append(notes, "inbox status unknown: "+r)
	}
	return out, notes, nil
}

func newDlqLsCmd(a *App) *cobra.Command {
	var (
		f      readFlags
		filter string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "ls QUEUE",
		Short: "List a DLQ's messages: why they died, where from, attempts, inbox status",
		Long: "Browse QUEUE without harm (DESIGN.md §4.3): each message is held for a moment and\n" +
			"returned, so the queue keeps its depth and order. Each line gives the logical ID,\n" +
			"the reason and origin of the last death, the attempt count, the age since it was\n" +
			"dead-lettered and whether the inbox has applied its effect. A quorum DLQ with a\n" +
			"delivery limit is refused (exit 3) where a browse would count against that limit.",
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > maxActionLimit {
				return Usage(fmt.Errorf("--limit %d: want 1 to %d", limit, maxActionLimit))
			}
			var flt *dlq.Filter
			if filter != "" {
				var err error
				if flt, err = dlq.CompileFilter(filter); err != nil {
					return Usage(err)
				}
			}
			rows, notes, t, err := a.listLetters(cmd.Context(), args[0], f, flt, nil, limit)
			if err != nil {
				return err
			}
			printNotes(a.Err, notes)
			if f.asJSON {
				return writeJSON(a.Out, lsJSONOf(rows))
			}
			return writeLsText(a.Out, t, rows)
		},
	}
	addReadFlags(cmd, &f)
	cmd.Flags().StringVar(&filter, "filter", "", `only messages matching EXPR, e.g. 'reason == "rejected" && attempts >= 3 && applied == false'`)
	cmd.Flags().IntVar(&limit, "limit", dlq.DefaultWindow, "list at most N messages")
	return cmd
}

// listLetters is the browse shared by ls and show: open, page, look up,
// return everything to the queue.
func (a *App) listLetters(ctx context.Context, queue string, f readFlags, flt *dlq.Filter, keep func(dlq.DeadLetter) bool, limit int) ([]listed, []string, *dlqTarget, error) {
	t, err := a.resolveDLQ(ctx, queue, f)
	if err != nil {
		return nil, nil, nil, err
	}
	if flt == nil && keep == nil {
		t.opts.Window = min(limit, dlq.DefaultWindow)
	}
	sess, done, err := a.browse(ctx, t)
	if err != nil {
		return nil, nil, nil, err
	}
	defer done()
	ib := a.openInbox(ctx, t)
	defer ib.Close()
	rows, notes, err := collect(ctx, sess, ib, flt, keep, limit)
	return rows, notes, t, err
}

func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(w, "note:", sanitize.Text(n))
	}
}

// lsJSON is the stable `dlq ls --json` shape of DESIGN.md §5.
type lsJSON struct {
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
}

type histJSON struct {
	Attempts map[string]int `json:"attempts"`
	Reasons  map[string]int `json:"reasons"`
	Origins  map[string]int `json:"origins"`
}

func lsMessageOf(r listed) lsMessage {
	m := lsMessage{MessageID: r.MessageID, LogicalID: r.LogicalID, Reason: r.Reason, OriginQueue: r.OriginQueue,
		OriginExchange: r.OriginExchange, RoutingKeys: r.RoutingKeys, Attempts: r.Attempts, Size: r.Size,
		Inbox: string(r.status), Quarantined: r.Quarantined}
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
	h := dlq.NewHistogram()
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

func writeLsText(w io.Writer, t *dlqTarget, rows []listed) error {
	if len(rows) == 0 {
		fmt.Fprintf(w, "no messages listed from %s\n", sanitize.Text(t.name))
		return nil
	}
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tLOGICAL ID\tREASON\tORIGIN\tATTEMPTS\tAGE\tSIZE\tINBOX\tFLAGS")
	h := dlq.NewHistogram()
	for _, r := range rows {
		h.Add(r.DeadLetter)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", r.Position, idText(r.DeadLetter), sanitize.Text(r.Reason),
			sanitize.Text(r.OriginQueue), r.Attempts, ageText(now, r.DeadLetteredAt), r.Size, r.status, flagsText(r.DeadLetter))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d messages from %s (held briefly and returned)\n", len(rows), sanitize.Text(t.name))
	writeHistText(w, h.Attempts, h.Reasons, h.Origins)
	return nil
}

func idText(d dlq.DeadLetter) string {
	if d.LogicalIDFrom == dlq.IDHash {
		return d.LogicalID + " (content hash)"
	}
	return sanitize.Text(d.LogicalID)
}

func ageText(now, at time.Time) string {
	if at.IsZero() {
		return "—"
	}
	return max(now.Sub(at), 0).Round(time.Second).String()
}

func flagsText(d dlq.DeadLetter) string {
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

func newDlqShowCmd(a *App) *cobra.Command {
	var (
		f     readFlags
		id    string
		limit int
	)
	cmd := &cobra.Command{
		Use:   "show QUEUE --id LOGICAL_ID",
		Short: "Show every message of a DLQ with one logical ID: deaths, properties, headers, body",
		Args:  oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			if id == "" {
				return Usage(errors.New("--id is required: the logical ID to show (see dlq ls)"))
			}
			keep := func(d dlq.DeadLetter) bool { return d.LogicalID == id }
			rows, notes, t, err := a.listLetters(cmd.Context(), args[0], f, nil, keep, limit)
			if err != nil {
				return err
			}
			printNotes(a.Err, notes)
			if len(rows) == 0 {
				return fmt.Errorf("no message with logical ID %s in %s", sanitize.Text(id), sanitize.Text(t.name))
			}
			if f.asJSON {
				out := struct {
					Messages []showJSON `json:"messages"`
				}{}
				for _, r := range rows {
					out.Messages = append(out.Messages, showJSONOf(r))
				}
				return writeJSON(a.Out, out)
			}
			for i, r := range rows {
				fmt.Fprintf(a.Out, "— message %d of %d with logical ID %s\n", i+1, len(rows), idText(r.DeadLetter))
				writeShowText(a.Out, r)
			}
			return nil
		},
	}
	addReadFlags(cmd, &f)
	cmd.Flags().StringVar(&id, "id", "", "logical ID of the message(s) to show")
	cmd.Flags().IntVar(&limit, "limit", 100, "show at most N messages with this ID")
	return cmd
}

// showJSON is one message in full; bodies that are not UTF-8 are base64.
type showJSON struct {
	lsMessage
	LogicalIDSource string         `json:"logical_id_source"`
	Position        int            `json:"position"`
	InboxAppliedAt  *time.Time     `json:"inbox_applied_at,omitempty"`
	ReplayCount     int            `json:"replay_count"`
	DeliveryCount   *int64         `json:"delivery_count"`
	Headroom        *int64         `json:"headroom"`
	Deaths          []dlq.Death    `json:"deaths"`
	Properties      dlq.Properties `json:"properties"`
	Headers         map[string]any `json:"headers"`
	Body            string         `json:"body"`
	BodyEncoding    string         `json:"body_encoding"`
}

func showJSONOf(r listed) showJSON {
	s := showJSON{lsMessage: lsMessageOf(r), LogicalIDSource: string(r.LogicalIDFrom), Position: r.Position,
		ReplayCount: r.ReplayCount, Deaths: r.Deaths, Properties: r.Properties, Headers: dlq.PlainHeaders(r.Headers)}
	if s.Deaths == nil {
		s.Deaths = []dlq.Death{}
	}
	if !r.applied.IsZero() {
		s.InboxAppliedAt = &r.applied
	}
	if r.DeliveryCount >= 0 {
		s.DeliveryCount = &r.DeliveryCount
	}
	if r.Headroom >= 0 {
		s.Headroom = &r.Headroom
	}
	s.Body, s.BodyEncoding = string(r.Body), "utf-8"
	if !utf8.Valid(r.Body) {
		s.Body, s.BodyEncoding = base64.StdEncoding.EncodeToString(r.Body), "base64"
	}
	return s
}

func writeShowText(w io.Writer, r listed) {
	p := r.Properties
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	line("logical id", fmt.Sprintf("%s (from %s)", idText(r.DeadLetter), r.LogicalIDFrom))
	line("message id", sanitize.Text(r.MessageID))
	line("reason", sanitize.Text(r.Reason))
	line("origin", fmt.Sprintf("queue %s, exchange %s, routing keys %s", sanitize.Text(r.OriginQueue),
		quoted(r.OriginExchange), sanitize.Text(strings.Join(r.RoutingKeys, " "))))
	line("attempts", strconv.Itoa(r.Attempts))
	line("dead-lettered", fmt.Sprintf("%s ago (no later than %s)", ageText(time.Now(), r.DeadLetteredAt), timeText(r.DeadLetteredAt)))
	inboxText := string(r.status)
	if !r.applied.IsZero() {
		inboxText += " at " + timeText(r.applied)
	}
	line("inbox", inboxText)
	line("flags", flagsText(r.DeadLetter))
	for _, kv := range [][2]string{{"content-type", p.ContentType}, {"content-encoding", p.ContentEncoding},
		{"correlation-id", p.CorrelationID}, {"reply-to", p.ReplyTo}, {"expiration", p.Expiration}, {"type", p.Type},
		{"app-id", p.AppID}, {"user-id", p.UserID}} {
		if kv[1] != "" {
			line(kv[0], sanitize.Text(kv[1]))
		}
	}
	if !p.Timestamp.IsZero() {
		line("timestamp", timeText(p.Timestamp))
	}
	line("delivery-mode", fmt.Sprintf("%d (priority %d)", p.DeliveryMode, p.Priority))
	for _, d := range r.Deaths {
		line("death", fmt.Sprintf("%s in %s ×%d since %s (exchange %s, keys %s)", sanitize.Text(d.Reason), sanitize.Text(d.Queue),
			d.Count, timeText(d.Time), quoted(d.Exchange), sanitize.Text(strings.Join(d.RoutingKeys, " "))))
	}
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k != dlq.HeaderDeath {
			line("header "+sanitize.Text(k), sanitize.Text(fmt.Sprint(dlq.Plain(r.Headers[k]))))
		}
	}
	_ = tw.Flush()
	if utf8.Valid(r.Body) {
		fmt.Fprintf(w, "body (%d bytes):\n%s\n", r.Size, sanitize.Block(string(r.Body)))
	} else {
		fmt.Fprintf(w, "body: %d bytes of binary (--json gives it in base64)\n", r.Size)
	}
}

func quoted(s string) string { return `"` + sanitize.Text(s) + `"` }

func timeText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339)
}

func newDlqStatsCmd(a *App) *cobra.Command {
	var f readFlags
	cmd := &cobra.Command{
		Use:   "stats QUEUE",
		Short: "Scan a whole DLQ for attempts, reasons, origins, replay loops and ages (no bodies kept)",
		Args:  oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.resolveDLQ(cmd.Context(), args[0], f)
			if err != nil {
				return err
			}
			conn, err := a.DialAMQP(t.vhost)
			if err != nil {
				return err
			}
			defer conn.Close()
			var progress func(int)
			if IsTerminal(a.Err) {
				progress = func(n int) { fmt.Fprintf(a.Err, "\rscanned %d of %d", n, t.info.Messages) }
			}
			st, err := dlq.Scan(cmd.Context(), conn, t.info, t.opts, progress)
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
			fmt.Fprintf(a.Out, "%s: %d messages, %d bytes, scanned in %s (complete: %v)\n",
				sanitize.Text(t.name), st.Total, st.Bytes, st.Took.Round(time.Millisecond), st.Complete)
			fmt.Fprintf(a.Out, "dead-lettered between %s and %s", timeText(st.OldestDeadLettered), timeText(st.NewestDeadLettered))
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
