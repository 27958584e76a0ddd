package mgmt

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"time"
)

// ChannelStat is one channel as the channels screen and `warren channels`
// list it (docs/ARCHITECTURE.md §4.9). A figure the broker did not report
// is nil: unknown, never 0.
type ChannelStat struct {
	Name       string // "CONNECTION (N)", unique while the channel lives
	Connection string // the name the client gave its connection (connection_name), else its addresses
	User       string
	Vhost      string
	Number     int
	// Confirm is whether the channel is in confirm mode.
	Confirm *bool
	// Unconfirmed are publishes the broker has taken and not yet
	// confirmed (messages_unconfirmed).
	Unconfirmed *int64
	// Unacked are deliveries to the channel's consumers not yet acked.
	Unacked *int64
	// Prefetch is the per-consumer prefetch (0: no limit), GlobalPrefetch
	// the channel-wide one.
	Prefetch       *int64
	GlobalPrefetch *int64
	Consumers      *int64
	// PublishRate is what the channel publishes per second, ConfirmRate
	// what the broker confirms to it, AckRate what its consumers ack.
	// Nil when the broker keeps no such rate for the channel (it never
	// published, confirmed or acked, or rates are off).
	PublishRate *float64
	ConfirmRate *float64
	AckRate     *float64
}

// Pending is the channel's unconfirmed publishes, 0 when not in confirm
// mode or unknown.
func (c ChannelStat) Pending() int64 {
	if c.Confirm == nil || !*c.Confirm || c.Unconfirmed == nil {
		return 0
	}
	return *c.Unconfirmed
}

// ChannelList is every channel of a vhost (or of the broker) with the
// broker's figures.
type ChannelList struct {
	Channels []ChannelStat // most unconfirmed first, then by name
	// Note says why the list is empty when the broker collects no
	// channel statistics.
	Note    string
	TakenAt time.Time
}

// Confirms sums the unconfirmed publishes of the channels in confirm
// mode, and counts the channels that have some pending.
func (l *ChannelList) Confirms() (unconfirmed int64, channels int) {
	for _, c := range l.Channels {
		if n := c.Pending(); n > 0 {
			unconfirmed += n
			channels++
		}
	}
	return unconfirmed, channels
}

// channelColumns are the fields the list reads: a channel carries many
// more (idle time, garbage collection, per-queue and per-exchange
// figures) that a large broker would otherwise send for nothing.
const channelColumns = "name,number,user,vhost,confirm,messages_unconfirmed,messages_unacknowledged," +
	"prefetch_count,global_prefetch_count,consumer_count,connection_details.name,message_stats"

// Channels reads every channel of vhost ("" for all) from
// /api/channels, asking only for the columns shown. A broker that
// collects no channel statistics (3.10 with them disabled answers 400)
// gives an empty list and a Note. Connections are read beside, for the
// names their clients gave them.
func (c *Client) Channels(ctx context.Context, vhost string) (*ChannelList, error) {
	path, connPath := "channels", "connections"
	if vhost != "" {
		path, connPath = "vhosts/"+esc(vhost)+"/channels", "vhosts/"+esc(vhost)+"/connections"
	}
	var (
		raw   []rawChannelStat
		conns []rawConnectionName
		note  string
	)
	err := parallel(ctx,
		func(ctx context.Context) error {
			err := c.get(ctx, path, url.Values{"columns": {channelColumns}}, &raw)
			if n, ok := channelsUnavailable(err); ok {
				note = n
				return nil
			}
			return err
		},
		func(ctx context.Context) error {
			err := c.get(ctx, connPath, url.Values{"columns": {"name,user_provided_name"}}, &conns)
			if _, ok := channelsUnavailable(err); ok {
				return nil
			}
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	given := make(map[string]string, len(conns))
	for _, cn := range conns {
		if cn.Given != "" {
			given[cn.Name] = cn.Given
		}
	}
	out := &ChannelList{TakenAt: time.Now(), Note: note, Channels: make([]ChannelStat, 0, len(raw))}
	for _, r := range raw {
		s := r.stat()
		if g, ok := given[s.Connection]; ok {
			s.Connection = g
		}
		out.Channels = append(out.Channels, s)
	}
	SortChannels(out.Channels)
	return out, nil
}

// SortChannels orders channels by unconfirmed publishes, most first
// (unknown last), then by name.
func SortChannels(chs []ChannelStat) {
	slices.SortStableFunc(chs, func(a, b ChannelStat) int {
		switch {
		case a.Unconfirmed == nil && b.Unconfirmed != nil:
			return 1
		case a.Unconfirmed != nil && b.Unconfirmed == nil:
			return -1
		case a.Unconfirmed != nil && *a.Unconfirmed != *b.Unconfirmed:
			return cmp.Compare(*b.Unconfirmed, *a.Unconfirmed)
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// rawChannelStat is /api/channels with the columns of channelColumns.
// Numbers are nullable: a broker leaves out what it does not keep.
type rawChannelStat struct {
	Name           string     `json:"name"`
	Number         int        `json:"number"`
	User           string     `json:"user"`
	Vhost          string     `json:"vhost"`
	Confirm        *bool      `json:"confirm"`
	Unconfirmed    number     `json:"messages_unconfirmed"`
	Unacked        number     `json:"messages_unacknowledged"`
	Prefetch       number     `json:"prefetch_count"`
	GlobalPrefetch number     `json:"global_prefetch_count"`
	Consumers      number     `json:"consumer_count"`
	Connection     channelRef `json:"connection_details"`
	MessageStats   *struct {
		Publish *rawRateOnly `json:"publish_details"`
		Confirm *rawRateOnly `json:"confirm_details"`
		Ack     *rawRateOnly `json:"ack_details"`
	} `json:"message_stats"`
}

// rawConnectionName is a connection's name (its addresses) and the name
// its client gave it (the connection_name client property).
type rawConnectionName struct {
	Name  string `json:"name"`
	Given string `json:"user_provided_name"`
}

// rawRateOnly is a *_details object whose rate may be missing.
type rawRateOnly struct {
	Rate number `json:"rate"`
}

func (r *rawRateOnly) rate() *float64 {
	if r == nil || !r.Rate.Set {
		return nil
	}
	v := r.Rate.V
	return &v
}

func (r rawChannelStat) stat() ChannelStat {
	s := ChannelStat{
		Name: r.Name, Connection: r.Connection.Name, User: r.User, Vhost: r.Vhost, Number: r.Number,
		Confirm: r.Confirm, Unconfirmed: r.Unconfirmed.count(), Unacked: r.Unacked.count(),
		Prefetch: r.Prefetch.count(), GlobalPrefetch: r.GlobalPrefetch.count(), Consumers: r.Consumers.count(),
	}
	if m := r.MessageStats; m != nil {
		s.PublishRate, s.ConfirmRate, s.AckRate = m.Publish.rate(), m.Confirm.rate(), m.Ack.rate()
	}
	return s
}
