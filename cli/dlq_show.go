package cli

import (
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

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

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
				return app.Usage(errors.New("--id is required: the logical ID to show (see dlq ls)"))
			}
			if limit <= 0 {
				return app.Usage(fmt.Errorf("--limit %d: want 1 or more messages to show", limit))
			}
			keep := func(d domain.DeadLetter) bool { return format.MatchesLogicalID(d, id) }
			rows, notes, t, err := a.listLetters(cmd.Context(), args[0], f, nil, keep, limit)
			if err != nil {
				return err
			}
			printNotes(a.Err, notes)
			if len(rows) == 0 {
				return fmt.Errorf("no message with logical ID %s in %s", sanitize.Text(id), sanitize.Text(t.Ref.Name))
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
				fmt.Fprintf(a.Out, "— message %d of %d with logical ID %s\n", i+1, len(rows), format.LogicalID(r.DeadLetter))
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
	LogicalIDSource string            `json:"logical_id_source"`
	Position        int               `json:"position"`
	InboxAppliedAt  *time.Time        `json:"inbox_applied_at,omitempty"`
	ReplayCount     int               `json:"replay_count"`
	DeliveryCount   *int64            `json:"delivery_count"`
	AcquiredCount   *int64            `json:"acquired_count"`
	Headroom        *int64            `json:"headroom"`
	Deaths          []domain.Death    `json:"deaths"`
	Properties      domain.Properties `json:"properties"`
	Headers         map[string]any    `json:"headers"`
	Body            string            `json:"body"`
	BodyEncoding    string            `json:"body_encoding"`
	// StackTrace is the convention's stack trace; Missing what its
	// headers lacked or carried in the wrong type; AlsoConventions the
	// other conventions whose headers it carries.
	StackTrace      string   `json:"stack_trace"`
	Missing         []string `json:"convention_missing"`
	AlsoConventions []string `json:"also_conventions"`
}

func showJSONOf(r listed) showJSON {
	s := showJSON{lsMessage: lsMessageOf(r), LogicalIDSource: string(r.LogicalIDFrom), Position: r.Position,
		ReplayCount: r.ReplayCount, Deaths: r.Deaths, Properties: r.Properties, Headers: domain.PlainHeaders(r.Headers),
		StackTrace: r.Failure.StackTrace, Missing: r.Failure.Missing, AlsoConventions: r.Failure.Also}
	if s.Missing == nil {
		s.Missing = []string{}
	}
	if s.AlsoConventions == nil {
		s.AlsoConventions = []string{}
	}
	if s.Deaths == nil {
		s.Deaths = []domain.Death{}
	}
	if !r.applied.IsZero() {
		s.InboxAppliedAt = &r.applied
	}
	if r.DeliveryCount >= 0 {
		s.DeliveryCount = &r.DeliveryCount
	}
	if r.AcquiredCount >= 0 {
		s.AcquiredCount = &r.AcquiredCount
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
	line("logical id", format.LogicalIDSource(r.DeadLetter))
	line("message id", sanitize.Text(r.MessageID))
	origin := fmt.Sprintf("queue %s, exchange %s, routing keys %s", orDash(sanitize.Text(r.OriginQueue)),
		quoted(r.OriginExchange), sanitize.Text(strings.Join(r.RoutingKeys, " ")))
	switch {
	case !format.DeadLettered(r.DeadLetter):
		line("reason", format.NotDeadLettered)
		if r.OriginQueue != "" {
			// Without x-death, only headers whoever published it set.
			line("origin", origin+" (from x-*-death headers, not from the broker)")
		}
	default:
		line("reason", sanitize.Text(r.Reason))
		line("origin", origin)
	}
	f := r.Failure
	line("read as", format.Convention(f.Convention))
	if len(f.Also) > 0 {
		line("also carries", sanitize.Text(strings.Join(f.Also, ", "))+" headers (the first convention read wins)")
	}
	if f.ErrorType != "" {
		line("error type", sanitize.Text(f.ErrorType))
	}
	if f.ErrorMessage != "" {
		line("error", sanitize.Text(f.ErrorMessage))
	}
	if len(f.Missing) > 0 {
		line("missing", sanitize.Text(strings.Join(f.Missing, "; ")))
	}
	if r.Group != "" {
		line("group", r.Group)
	}
	line("attempts", strconv.Itoa(r.Attempts))
	for _, c := range format.DeliveryCounts(r.DeadLetter) {
		line(c.Name, c.Value)
	}
	switch {
	case !format.DeadLettered(r.DeadLetter):
	case r.DeadLetteredAt.IsZero():
		line("dead-lettered", "at an unknown time: x-death carries no time")
	default:
		line("dead-lettered", fmt.Sprintf("%s ago (no later than %s)", format.Age(time.Now(), r.DeadLetteredAt), format.Time(r.DeadLetteredAt)))
	}
	inboxText := string(r.status)
	if !r.applied.IsZero() {
		inboxText += " at " + format.Time(r.applied)
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
		line("timestamp", format.Time(p.Timestamp))
	}
	line("delivery-mode", fmt.Sprintf("%d (priority %d)", p.DeliveryMode, p.Priority))
	for _, d := range r.Deaths {
		line("death", fmt.Sprintf("%s in %s ×%d since %s (exchange %s, keys %s)", sanitize.Text(d.Reason), sanitize.Text(d.Queue),
			d.Count, format.Time(d.Time), quoted(d.Exchange), sanitize.Text(strings.Join(d.RoutingKeys, " "))))
	}
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k != domain.HeaderDeath {
			shown, note := format.Cut(fmt.Sprint(domain.Plain(r.Headers[k])), format.HeaderTextLimit)
			line("header "+sanitize.Text(k), sanitize.Text(shown)+note)
		}
	}
	_ = tw.Flush()
	body := format.BodyText(r.Body, p.ContentType, p.ContentEncoding, false)
	head := body.Kind + ", " + format.Bytes(int64(len(r.Body)))
	if body.Note != "" {
		head += "; " + body.Note
	}
	fmt.Fprintf(w, "body (%s):\n%s\n", head, strings.Join(body.Lines, "\n"))
	if body.More != "" {
		fmt.Fprintln(w, body.More)
	}
}

func quoted(s string) string { return `"` + sanitize.Text(s) + `"` }
