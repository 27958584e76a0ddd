package mgmt

import (
	"context"
	"net/url"
	"time"

	"github.com/warrenops/warren/domain"
)

// channelColumns are the fields the list reads: a channel carries many
// more (idle time, garbage collection, per-queue and per-exchange
// figures) that a large broker would otherwise send for nothing.
const channelColumns = "name,number,user,vhost,confirm,messages_unconfirmed,messages_unacknowledged," +
	"prefetch_count,global_prefetch_count,consumer_count,connection_details.name,message_stats"

// Channels reads every channel of vhost ("" for all) from
// /api/channels, asking only for the columns shown. A broker that
// collects no channel statistics (3.10 with them disabled answers 400)
// gives an empty list and a Note. Connections are read beside, for the
// names their clients gave them and their states (a connection blocked
// by a resource alarm).
func (c *Client) Channels(ctx context.Context, vhost string) (*domain.ChannelList, error) {
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
			err := c.get(ctx, connPath, url.Values{"columns": {"name,user_provided_name,state"}}, &conns)
			if _, ok := channelsUnavailable(err); ok {
				return nil
			}
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]rawConnectionName, len(conns))
	for _, cn := range conns {
		byName[cn.Name] = cn
	}
	out := &domain.ChannelList{TakenAt: time.Now(), Note: note, Channels: make([]domain.ChannelStat, 0, len(raw))}
	for _, r := range raw {
		s := r.stat()
		if cn, ok := byName[s.Connection]; ok {
			s.ConnectionState = cn.State
			if cn.Given != "" {
				s.Connection = cn.Given
			}
		}
		out.Channels = append(out.Channels, s)
	}
	domain.SortChannels(out.Channels)
	return out, nil
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

// rawConnectionName is a connection's name (its addresses), the name
// its client gave it (the connection_name client property) and its
// state (blocked by an alarm, in flow control, running).
type rawConnectionName struct {
	Name  string `json:"name"`
	Given string `json:"user_provided_name"`
	State string `json:"state"`
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

func (r rawChannelStat) stat() domain.ChannelStat {
	s := domain.ChannelStat{
		Name: r.Name, Connection: r.Connection.Name, User: r.User, Vhost: r.Vhost, Number: r.Number,
		Confirm: r.Confirm, Unconfirmed: r.Unconfirmed.count(), Unacked: r.Unacked.count(),
		Prefetch: r.Prefetch.count(), GlobalPrefetch: r.GlobalPrefetch.count(), Consumers: r.Consumers.count(),
	}
	if m := r.MessageStats; m != nil {
		s.PublishRate, s.ConfirmRate, s.AckRate = m.Publish.rate(), m.Confirm.rate(), m.Ack.rate()
	}
	if s.Confirm != nil && !*s.Confirm {
		// A channel not in confirm mode confirms nothing: the broker's
		// rate of 0 for it is no figure.
		s.ConfirmRate = nil
	}
	return s
}
