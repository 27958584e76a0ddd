package mgmt

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/warrenops/warren/domain"
)

// maxPublisherExchanges bounds the exchanges read for one queue's
// publishers; a queue bound to more is rare, and the rest are named as
// not read.
const maxPublisherExchanges = 16

// publishersOf lists the channels publishing to the exchanges bound to
// ref (the default exchange included), read from each exchange's
// "incoming" figures. Only a broker with rates_mode=detailed keeps them;
// otherwise it returns no publishers and says why.
func (c *Client) publishersOf(ctx context.Context, ref domain.QueueRef, ratesMode string) ([]domain.Publisher, string, error) {
	if ratesMode != "detailed" {
		return nil, domain.NoPublisherLinks, nil
	}
	var binds []rawBinding
	if err := c.get(ctx, "queues/"+esc(ref.Vhost)+"/"+esc(ref.Name)+"/bindings", nil, &binds); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return nil, "", nil
		}
		return nil, "", err
	}
	exchanges := []string{""}
	for _, b := range binds {
		if b.Source != "" && !slices.Contains(exchanges, b.Source) {
			exchanges = append(exchanges, b.Source)
		}
	}
	note := ""
	if len(exchanges) > maxPublisherExchanges {
		note = "publishers read for the first 16 exchanges bound to this queue only"
		exchanges = exchanges[:maxPublisherExchanges]
	}
	got := make([][]domain.Publisher, len(exchanges))
	err := forEach(ctx, len(exchanges), maxParallel, func(ctx context.Context, i int) error {
		name := exchanges[i]
		path := "exchanges/" + esc(ref.Vhost) + "/" + esc(cmp.Or(name, "amq.default"))
		var r rawExchangeIncoming
		err := c.get(ctx, path, nil, &r)
		if errors.Is(err, domain.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		got[i] = r.publishers(name)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	out := slices.Concat(got...)
	slices.SortStableFunc(out, func(a, b domain.Publisher) int {
		ra, rb := 0.0, 0.0
		if a.PublishRate != nil {
			ra = *a.PublishRate
		}
		if b.PublishRate != nil {
			rb = *b.PublishRate
		}
		if c := cmp.Compare(rb, ra); c != 0 {
			return c
		}
		return cmp.Compare(a.Channel, b.Channel)
	})
	return out, note, nil
}

// rawExchangeIncoming is the part of /api/exchanges/VHOST/NAME that names
// the channels publishing to it (rates_mode=detailed only).
type rawExchangeIncoming struct {
	Incoming []struct {
		Stats *struct {
			Publish *rawRateOnly `json:"publish_details"`
		} `json:"stats"`
		Channel channelRef `json:"channel_details"`
	} `json:"incoming"`
}

func (r rawExchangeIncoming) publishers(exchange string) []domain.Publisher {
	out := make([]domain.Publisher, 0, len(r.Incoming))
	for _, in := range r.Incoming {
		if in.Channel.Name == "" {
			continue // the channel closed
		}
		p := domain.Publisher{Exchange: exchange, Channel: in.Channel.Name, Connection: in.Channel.ConnectionName, User: in.Channel.User}
		if in.Stats != nil {
			p.PublishRate = in.Stats.Publish.rate()
		}
		out = append(out, p)
	}
	return out
}
