package domain

import (
	"cmp"
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
	// ConnectionState is the state of the channel's connection as the
	// broker gives it ("running", "blocked", "blocking", "flow", …); ""
	// when it gave none.
	ConnectionState string
}

// Blocked says a resource alarm stops the publishes of the channel's
// connection: "blocked", or "blocking" (blocked at its next publish).
func (c ChannelStat) Blocked() bool {
	return c.ConnectionState == "blocked" || c.ConnectionState == "blocking"
}

// HeldBack says how the broker holds back the channel's connection: a
// resource alarm blocks it, or credit flow slows it ("flow"); "" when it
// does neither or the state is unknown.
func (c ChannelStat) HeldBack() string {
	switch {
	case c.Blocked():
		return "blocked by a resource alarm"
	case c.ConnectionState == "flow":
		return "slowed by flow control"
	}
	return ""
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

// SortChannels orders channels by the order of magnitude of their
// unconfirmed publishes, most first (unknown last), then by name: a
// healthy publisher's count flips between 0 and a few from one refresh
// to the next, and rows that swapped places at each would be hard to
// read, while one whose backlog grows tenfold still rises.
func SortChannels(chs []ChannelStat) {
	slices.SortStableFunc(chs, func(a, b ChannelStat) int {
		switch {
		case a.Unconfirmed == nil && b.Unconfirmed != nil:
			return 1
		case a.Unconfirmed != nil && b.Unconfirmed == nil:
			return -1
		case a.Unconfirmed != nil && magnitude(*a.Unconfirmed) != magnitude(*b.Unconfirmed):
			return cmp.Compare(magnitude(*b.Unconfirmed), magnitude(*a.Unconfirmed))
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// magnitude is n's order of magnitude: 0 below 10, 1 below 100, and so
// on.
func magnitude(n int64) int {
	m := 0
	for ; n >= 10; n /= 10 {
		m++
	}
	return m
}

// Publisher is a channel publishing to an exchange that routes to a
// queue, as the broker links them when its rates mode is detailed.
type Publisher struct {
	Exchange   string // "" is the default exchange
	Channel    string
	Connection string
	User       string
	// PublishRate is what the channel publishes to the exchange per
	// second; nil when the broker gives no rate.
	PublishRate *float64
}

// NoPublisherLinks is what the queue screen says when the broker keeps no
// per-channel figures for exchanges: only rates_mode=detailed does.
const NoPublisherLinks = "the broker's rates mode does not link publishers to exchanges; see the channels screen"
