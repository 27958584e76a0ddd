package cli

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

func newChannelsCmd(a *App) *cobra.Command {
	var (
		asJSON bool
		vhost  string
	)
	cmd := &cobra.Command{
		Use:   "channels",
		Short: "Print every channel with its confirm mode, unconfirmed publishes, rates, prefetch and unacked",
		Long: "Print every AMQP channel: its connection (the name the client gave it, else its\n" +
			"addresses), user, vhost, whether it is in confirm mode, how many of its publishes\n" +
			"the broker has not confirmed yet, its publish, confirm and ack rates, its prefetch\n" +
			"and the deliveries its consumers hold unacknowledged. The channels with the most\n" +
			"unconfirmed publishes come first. A figure the broker does not report is — (null\n" +
			"in --json), never 0. Figures lag by the broker's statistics interval. Reads all\n" +
			"vhosts unless --vhost or the context's vhost names one. Exit 1 when the\n" +
			"management API cannot be read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, m, err := a.Factory().Management()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("vhost") {
				vhost = c.Vhost
			}
			l, err := m.Channels(cmd.Context(), vhost)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.Out, channelsOf(l))
			}
			return writeChannelsText(a.Out, l)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/ARCHITECTURE.md §5 fields)")
	cmd.Flags().StringVar(&vhost, "vhost", "", "only this vhost (default: the context's vhost, else all)")
	return cmd
}

// channelsJSON is the stable `channels --json` shape of
// docs/ARCHITECTURE.md §5.4.
type channelsJSON struct {
	Channels            []channelJSON `json:"channels"`
	UnconfirmedTotal    int64         `json:"unconfirmed_total"`
	UnconfirmedChannels int           `json:"unconfirmed_channels"`
	Note                *string       `json:"note"`
}

type channelJSON struct {
	Name           string   `json:"name"`
	Connection     string   `json:"connection"`
	User           string   `json:"user"`
	Vhost          string   `json:"vhost"`
	Confirm        *bool    `json:"confirm"`
	Unconfirmed    *int64   `json:"unconfirmed"`
	PublishRate    *float64 `json:"publish_rate"`
	ConfirmRate    *float64 `json:"confirm_rate"`
	AckRate        *float64 `json:"ack_rate"`
	Prefetch       *int64   `json:"prefetch"`
	GlobalPrefetch *int64   `json:"global_prefetch"`
	Unacked        *int64   `json:"unacked"`
	Consumers      *int64   `json:"consumers"`
	// ConnectionState is the broker's word for the connection:
	// "running", "blocked" (a resource alarm), "flow", …; null when it
	// gave none.
	ConnectionState *string `json:"connection_state"`
}

func channelsOf(l *domain.ChannelList) channelsJSON {
	out := channelsJSON{Channels: make([]channelJSON, 0, len(l.Channels))}
	out.UnconfirmedTotal, out.UnconfirmedChannels = l.Confirms()
	if l.Note != "" {
		out.Note = &l.Note
	}
	for _, c := range l.Channels {
		ch := channelJSON{
			Name: c.Name, Connection: c.Connection, User: c.User, Vhost: c.Vhost,
			Confirm: c.Confirm, Unconfirmed: c.Unconfirmed,
			PublishRate: rounded(c.PublishRate), ConfirmRate: rounded(c.ConfirmRate), AckRate: rounded(c.AckRate),
			Prefetch: c.Prefetch, GlobalPrefetch: c.GlobalPrefetch, Unacked: c.Unacked, Consumers: c.Consumers,
		}
		if c.ConnectionState != "" {
			ch.ConnectionState = &c.ConnectionState
		}
		out.Channels = append(out.Channels, ch)
	}
	return out
}

func rounded(r *float64) *float64 {
	if r == nil {
		return nil
	}
	v := round(*r, 2)
	return &v
}

func writeChannelsText(w io.Writer, l *domain.ChannelList) error {
	if l.Note != "" {
		fmt.Fprintln(w, sanitize.Text(l.Note))
	}
	if len(l.Channels) == 0 {
		fmt.Fprintln(w, "no channels")
		return nil
	}
	fmt.Fprintln(w, format.Confirms(l.Confirms()))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONNECTION\tCH\tUSER\tVHOST\tCONFIRM\tUNCONF\tPUB/s\tCONF/s\tACK/s\tPREFETCH\tUNACKED\tHELD BACK")
	for _, c := range l.Channels {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			sanitize.Text(c.Connection), c.Number, sanitize.Text(c.User), sanitize.Text(c.Vhost),
			format.Confirm(c), format.Unconfirmed(c), format.RateOf(c.PublishRate), format.RateOf(c.ConfirmRate),
			format.RateOf(c.AckRate), format.Prefetch(c), format.CountOf(c.Unacked), cmp.Or(c.HeldBack(), "—"))
	}
	return tw.Flush()
}
