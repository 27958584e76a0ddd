package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newStatusCmd(a *App) *cobra.Command {
	var (
		asJSON, check, all bool
		vhost              string
		window             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print every queue's depth, oldest message age, rates, drain ETA and DLQ",
		Long: "Print every queue with its depth (ready, unacked), consumers, oldest message age\n" +
			"(classic queues whose publishers set the timestamp property; — otherwise), publish\n" +
			"and ack rates, drain ETA (backlog ÷ (ack − publish) when draining) and paired DLQ.\n" +
			"The table lists the deepest queues first; --json lists them by vhost and name with\n" +
			"the fields scripts may rely on. Rates lag by the broker's statistics interval:\n" +
			"stats_age_seconds bounds their age. Reads all vhosts unless --vhost or the\n" +
			"context's vhost names one. Exit 1 when the management API cannot be read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all && a.ContextName != "" {
				return app.Usage(fmt.Errorf("--all-contexts reads every context of the config: drop --context %s, or drop --all-contexts to read that one alone", sanitize.Text(a.ContextName)))
			}
			if check {
				return a.runCheck(cmd.Context(), vhost, cmd.Flags().Changed("vhost"), window, all, asJSON)
			}
			if cmd.Flags().Changed("window") {
				return app.Usage(errors.New("--window goes with --check"))
			}
			if all {
				if !asJSON {
					return app.Usage(errors.New("--all-contexts lists the fleet with --json (the fleet view is `warren fleet`), or judges it with --check"))
				}
				return a.writeFleetJSON(cmd.Context())
			}
			s, err := a.fullSnapshot(cmd, vhost)
			if err != nil {
				return err
			}
			if asJSON {
				return writeStatusJSON(a.Out, s)
			}
			return writeStatusText(a.Out, s)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/ARCHITECTURE.md §5 fields)")
	cmd.Flags().StringVar(&vhost, "vhost", "", "only this vhost (default: the context's vhost, else all)")
	addCheckFlags(cmd, &check, &window, &all)
	return cmd
}

// statusJSON is the stable `status --json` shape of docs/ARCHITECTURE.md §5.
type statusJSON struct {
	Nodes           []statusNode  `json:"nodes"`
	Queues          []statusQueue `json:"queues"`
	StatsAgeSeconds float64       `json:"stats_age_seconds"`
	// Fallback is set when a fallback node's management API answered,
	// the first the config names did not.
	Fallback *statusFallback `json:"fallback"`
}

// statusFallback says which fallback node answered, and why the first
// did not.
type statusFallback struct {
	URL        string `json:"url"`
	First      string `json:"first"`
	FirstError string `json:"first_error"`
}

// statusNode is one cluster member as the management API lists it.
type statusNode struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
}

type statusQueue struct {
	Vhost            string     `json:"vhost"`
	Name             string     `json:"name"`
	Type             string     `json:"type"`
	Messages         int64      `json:"messages"`
	Ready            int64      `json:"ready"`
	Unacked          int64      `json:"unacked"`
	Consumers        int        `json:"consumers"`
	OldestAgeSeconds *float64   `json:"oldest_age_seconds"`
	PublishRate      float64    `json:"publish_rate"`
	AckRate          float64    `json:"ack_rate"`
	DrainETASeconds  *float64   `json:"drain_eta_seconds"`
	DLQ              *statusDLQ `json:"dlq"`
	// DLQOf are the queues this queue is the DLQ or error queue of;
	// ErrorQueue says it is judged as one (its name is a framework's
	// error queue's) even when it serves none yet.
	DLQOf      []statusDLQOf `json:"dlq_of"`
	ErrorQueue bool          `json:"error_queue"`
	// RabbitMQ 4.3's quorum figures; null where the broker does not
	// report them (unknown, never 0).
	Delayed *int64 `json:"delayed"`
	DLXHeld *int64 `json:"dlx_held"`
	// A quorum queue's replicas: its leader, its members, those the
	// broker reports online and the members that are not; null for
	// other queue types, online and members_down null where the broker
	// does not say.
	Leader      *string  `json:"leader"`
	Members     []string `json:"members"`
	Online      []string `json:"online"`
	MembersDown []string `json:"members_down"`
}

type statusDLQ struct {
	Vhost    string `json:"vhost"`
	Name     string `json:"name"`
	Messages int64  `json:"messages"`
	// Pairing says how the DLQ was paired (docs/ARCHITECTURE.md §4.12):
	// dlx, config, naming or messages.
	Pairing string `json:"pairing"`
}

// statusDLQOf is a queue an error queue or DLQ serves.
type statusDLQOf struct {
	Vhost   string `json:"vhost"`
	Name    string `json:"name"`
	Pairing string `json:"pairing"`
}

func statusOf(s *domain.Snapshot) statusJSON {
	out := statusJSON{Nodes: make([]statusNode, 0, len(s.Nodes)), Queues: make([]statusQueue, 0, len(s.Queues)),
		StatsAgeSeconds: round(s.StatsAge.Seconds(), 1)}
	if ov := s.Overview; ov.Via != "" {
		out.Fallback = &statusFallback{URL: ov.Via, First: ov.First, FirstError: ov.Missed}
	}
	for _, n := range s.Nodes {
		out.Nodes = append(out.Nodes, statusNode{Name: n.Name, Running: n.Running})
	}
	_, nodesDown := domain.NodesRunning(s.Nodes)
	pairing := make(map[domain.QueueRef]string, len(s.Queues))
	for _, q := range s.Queues {
		if q.DLQ != nil {
			pairing[q.Ref()] = q.DLQSource
		}
	}
	for _, q := range s.Queues {
		row := statusQueue{Vhost: q.Vhost, Name: q.Name, Type: q.Type, Messages: q.Messages, Ready: q.Ready,
			Unacked: q.Unacked, Consumers: q.Consumers, PublishRate: round(q.PublishRate, 2), AckRate: round(q.AckRate, 2),
			Delayed: q.Delayed, DLXHeld: q.DLXHeld}
		if age, ok := q.OldestAge(s.TakenAt); ok {
			v := round(age.Seconds(), 3)
			row.OldestAgeSeconds = &v
		}
		if eta, ok := q.DrainETA(); ok {
			v := round(eta.Seconds(), 1)
			row.DrainETASeconds = &v
		}
		if q.DLQ != nil {
			row.DLQ = &statusDLQ{Vhost: q.DLQ.Vhost, Name: q.DLQ.Name, Messages: q.DLQMessages, Pairing: q.DLQSource}
		}
		row.DLQOf, row.ErrorQueue = []statusDLQOf{}, q.ErrorQueue
		for _, src := range q.DLQOf {
			by, ok := pairing[src]
			if !ok {
				by = q.PairedBy
			}
			row.DLQOf = append(row.DLQOf, statusDLQOf{Vhost: src.Vhost, Name: src.Name, Pairing: by})
		}
		if q.Type == "quorum" {
			if q.Node != "" {
				leader := q.Node
				row.Leader = &leader
			}
			row.Members, row.Online, row.MembersDown = q.Members, q.Online, q.MembersDown(nodesDown...)
		}
		out.Queues = append(out.Queues, row)
	}
	return out
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func writeStatusJSON(w io.Writer, s *domain.Snapshot) error {
	return writeJSON(w, statusOf(s))
}

func writeStatusText(w io.Writer, s *domain.Snapshot) error {
	ov := s.Overview
	fmt.Fprintf(w, "RabbitMQ %s, cluster %s; stats at most %s old\n",
		sanitize.Text(ov.RabbitMQVersion), sanitize.Text(ov.ClusterName), format.Duration(s.StatsAge))
	if ov.Via != "" {
		fmt.Fprintf(w, "read through the fallback node %s: %s did not answer (%s)\n",
			sanitize.Text(ov.Via), sanitize.Text(ov.First), sanitize.Text(cmp.Or(ov.Missed, "not tried since")))
	}
	if running, down := domain.NodesRunning(s.Nodes); len(down) > 0 {
		fmt.Fprintf(w, "nodes %d/%d running; down: %s\n", running, len(s.Nodes), sanitizeAll(down))
	} else {
		fmt.Fprintf(w, "nodes %d/%d running\n", running, len(s.Nodes))
	}
	for _, n := range s.Nodes {
		switch {
		case !n.Running:
			fmt.Fprintf(w, "NODE DOWN: %s\n", sanitize.Text(n.Name))
		case n.MemAlarm || n.DiskAlarm:
			var alarms []string
			if n.MemAlarm {
				alarms = append(alarms, fmt.Sprintf("memory (%d of %d MiB)", n.MemUsed>>20, n.MemLimit>>20))
			}
			if n.DiskAlarm {
				alarms = append(alarms, fmt.Sprintf("disk (%d MiB free, limit %d MiB)", n.DiskFree>>20, n.DiskLimit>>20))
			}
			fmt.Fprintf(w, "ALARM on %s: %s; publishers are blocked\n", sanitize.Text(n.Name), strings.Join(alarms, ", "))
		}
	}
	if len(s.Queues) == 0 {
		fmt.Fprintln(w, "no queues")
		return nil
	}
	rows := append([]domain.Queue(nil), s.Queues...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Messages > rows[j].Messages })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VHOST\tQUEUE\tTYPE\tREADY\tUNACKED\tCONS\tOLDEST\tIN/s\tOUT/s\tDRAIN\tDLQ")
	unknown := map[string]int{}
	for _, q := range rows {
		oldest := format.Unknown
		if age, ok := q.OldestAge(s.TakenAt); ok {
			oldest = format.Duration(age)
		} else if q.Messages > 0 {
			unknown[q.OldestUnknownReason]++
		}
		dlq := format.Unknown
		if q.DLQ != nil {
			dlq = fmt.Sprintf("%s (%s)", sanitize.Text(q.DLQ.Name), format.Count(q.DLQMessages))
			if q.DLQSource != domain.PairedByDLX {
				dlq += " by " + q.DLQSource
			}
		}
		kind := q.Type
		if q.State != "" && q.State != "running" {
			kind += " (" + q.State + ")"
		}
		in, out := format.Rate(q.PublishRate), format.Rate(q.AckRate)
		if !q.HasRates {
			in, out = "—", "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n",
			sanitize.Text(q.Vhost), sanitize.Text(q.Name), sanitize.Text(kind), format.Count(q.Ready), format.Count(q.Unacked),
			q.Consumers, oldest, in, out, format.Drain(q.Drain()), dlq)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeReplicas(w, rows, s.Nodes); err != nil {
		return err
	}
	reasons := make([]string, 0, len(unknown))
	for r := range unknown {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "oldest %s on %d queue(s) with messages: %s\n", format.Unknown, unknown[r], sanitize.Text(r))
	}
	return nil
}

// writeReplicas lists each quorum queue's leader and members, with the
// members that are down, where some quorum queue is replicated.
func writeReplicas(w io.Writer, rows []domain.Queue, nodes []domain.Node) error {
	_, nodesDown := domain.NodesRunning(nodes)
	var quorum []domain.Queue
	replicated := false
	for _, q := range rows {
		if q.Type == "quorum" {
			quorum = append(quorum, q)
			replicated = replicated || len(q.Members) > 1
		}
	}
	if !replicated {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VHOST\tQUORUM QUEUE\tLEADER\tMEMBERS\tDOWN")
	for _, q := range quorum {
		leader := format.Unknown
		if q.Node != "" {
			leader = sanitize.Text(q.Node)
		}
		down := format.Unknown
		switch d := q.MembersDown(nodesDown...); {
		case d == nil:
		case len(d) == 0:
			down = "none"
		default:
			down = sanitizeAll(d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sanitize.Text(q.Vhost), sanitize.Text(q.Name), leader, sanitizeAll(q.Members), down)
	}
	return tw.Flush()
}

// sanitizeAll joins names from the broker, each made safe to print.
func sanitizeAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = sanitize.Text(n)
	}
	return strings.Join(out, ", ")
}

// fullSnapshot reads every queue of vhost (the --vhost flag, else the
// context's, else all) with statistics: rates for status, and the
// consumer counts that lint's checks need.
func (a *App) fullSnapshot(cmd *cobra.Command, vhost string) (*domain.Snapshot, error) {
	c, m, err := a.Factory().Management()
	if err != nil {
		return nil, err
	}
	if !cmd.Flags().Changed("vhost") {
		vhost = c.Vhost
	}
	return m.Snapshot(cmd.Context(), domain.SnapshotOptions{Vhost: vhost, AllRates: true})
}
