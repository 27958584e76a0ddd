package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newDlqGroupsCmd(a *App) *cobra.Command {
	var f readFlags
	cmd := &cobra.Command{
		Use:   "groups QUEUE",
		Short: "Group a whole DLQ's messages by how they failed: convention, origin, error type and message",
		Long: "Scan QUEUE as dlq stats does (no bodies kept, every message given back) and group its\n" +
			"messages by failure (docs/ARCHITECTURE.md §4.12): the convention that wrote them (the\n" +
			"broker's x-death or a framework's error headers), the origin, the error type (or the\n" +
			"broker's reason) and the error message with its numbers, IDs, quoted strings and\n" +
			"addresses made placeholders. A group's ID is the same on every run; --group ID on\n" +
			"dlq ls, replay and quarantine acts on one group.",
		Args: oneQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, t, st, err := a.scanDLQ(cmd.Context(), args[0], f, true)
			if err != nil {
				return err
			}
			defer o.Close()
			groups := st.Groups.List()
			inbox, ierr := o.GroupsInbox(cmd.Context(), t, groups)
			if ierr != nil && !errors.Is(ierr, ops.ErrNoInbox) {
				fmt.Fprintf(a.Err, "note: inbox unknown: %s\n", sanitize.Text(ierr.Error()))
			}
			if f.asJSON {
				return writeJSON(a.Out, groupsJSONOf(st, groups, inbox))
			}
			return writeGroupsText(a.Out, t, st, groups, inbox)
		},
	}
	addReadFlags(cmd, &f)
	return cmd
}

// groupsJSON is the stable `dlq groups --json` shape of docs/ARCHITECTURE.md §5.4.
type groupsJSON struct {
	Queue    string      `json:"queue"`
	Total    int         `json:"total"`
	Complete bool        `json:"complete"`
	Groups   []groupJSON `json:"groups"`
}

type groupJSON struct {
	ID          string     `json:"id"`
	Count       int        `json:"count"`
	Convention  string     `json:"convention"`
	Origin      string     `json:"origin"`
	Kind        string     `json:"kind"`
	ErrorType   string     `json:"error_type"`
	Message     string     `json:"message"`
	Example     string     `json:"example"`
	FirstFailed *time.Time `json:"first_failed"`
	LastFailed  *time.Time `json:"last_failed"`
	Attempts    spreadJSON `json:"attempts"`
	// Applied and Pending are the inbox's counts; null when the queue
	// has no inbox or it did not answer.
	Applied *int `json:"applied"`
	Pending *int `json:"pending"`
}

type spreadJSON struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

func groupsJSONOf(st *domain.Stats, groups []domain.Group, inbox map[string]ops.GroupInbox) groupsJSON {
	out := groupsJSON{Queue: st.Queue.Name, Total: st.Total, Complete: st.Complete, Groups: make([]groupJSON, 0, len(groups))}
	for _, g := range groups {
		j := groupJSON{ID: g.ID, Count: g.Count, Convention: g.Convention, Origin: g.Origin, Kind: g.Kind,
			Message: g.Message, Example: g.Example, Attempts: spreadJSON{g.MinAttempts, g.MaxAttempts}}
		if g.Type != g.Kind {
			j.ErrorType = g.Type
		}
		if !g.FirstFailed.IsZero() {
			first, last := g.FirstFailed.UTC(), g.LastFailed.UTC()
			j.FirstFailed, j.LastFailed = &first, &last
		}
		if gi, ok := inbox[g.ID]; ok && gi.Known {
			j.Applied, j.Pending = &gi.Applied, &gi.Pending
		}
		out.Groups = append(out.Groups, j)
	}
	return out
}

func writeGroupsText(w io.Writer, t *ops.Target, st *domain.Stats, groups []domain.Group, inbox map[string]ops.GroupInbox) error {
	if len(groups) == 0 {
		fmt.Fprintf(w, "no messages in %s\n", sanitize.Text(t.Ref.Name))
		return nil
	}
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tCOUNT\tCONVENTION\tORIGIN\tTYPE\tMESSAGE\tFIRST\tLAST\tATTEMPTS\tINBOX")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Count, orDash(sanitize.Text(g.Convention)),
			orDash(sanitize.Text(g.Origin)), orDash(sanitize.Text(format.ShortType(g.Type))), orDash(cutText(sanitize.Text(g.Message), 60)),
			format.Age(now, g.FirstFailed), format.Age(now, g.LastFailed), spread(g.MinAttempts, g.MaxAttempts), inboxText(inbox[g.ID]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s of %s in %s (%s); act on one with --group ID\n",
		format.Messages(st.Total), sanitize.Text(t.Ref.Name), format.Plural(len(groups), "failure group"), completeness(st))
	return nil
}

func spread(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func inboxText(gi ops.GroupInbox) string {
	if !gi.Known {
		return "unknown"
	}
	return fmt.Sprintf("%d applied, %d pending", gi.Applied, gi.Pending)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// cutText cuts a sanitised cell to n runes, marking the cut.
func cutText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
