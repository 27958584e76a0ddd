package mgmt

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"time"

	"github.com/warrenops/warren/domain"
)

// historyParams ask the API for ten minutes of samples every 10 s.
var historyParams = url.Values{
	"lengths_age": {"600"}, "lengths_incr": {"10"},
	"msg_rates_age": {"600"}, "msg_rates_incr": {"10"},
}

// Queue reads one queue for the queue screen. The queue's vhost is read
// through Snapshot (cheap list, cached topology) so that its DLQ pairing
// and findings match the overview's.
func (c *Client) Queue(ctx context.Context, vhost, name string) (*domain.QueueDetail, error) {
	ref := domain.QueueRef{Vhost: vhost, Name: name}
	start := time.Now()
	var (
		s   *domain.Snapshot
		raw *rawQueue
	)
	err := parallel(ctx,
		func(ctx context.Context) (err error) {
			s, err = c.Snapshot(ctx, domain.SnapshotOptions{Vhost: vhost})
			return err
		},
		func(ctx context.Context) (err error) {
			raw, err = c.queueStats(ctx, ref, "", historyParams)
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	if raw.Vhost == "" {
		raw.Vhost = vhost
	}
	q := raw.queue(true)
	q.ResolveDeadLettering()
	i := -1
	for j := range s.Queues {
		if s.Queues[j].Ref() == ref {
			i = j
		}
	}
	if i < 0 {
		s.Queues = append(s.Queues, q)
		i = len(s.Queues) - 1
	} else {
		s.Queues[i] = withDepth(q, s.Queues[i])
	}
	pairDLQs(s.Queues, &s.Topology, c.pins, c.Learned()...)
	markParking(s.Queues, c.parking)
	withoutRates(s.Queues[i:i+1], s.Overview.RatesMode)
	q = s.Queues[i]

	d := &domain.QueueDetail{Queue: q, UnackedUsed: q.Unacked, DeliveryLimit: q.DeliveryLimit(s.Overview.RabbitMQVersion)}
	for _, rc := range raw.ConsumerDetails {
		d.Consumers = append(d.Consumers, rc.consumer(ref))
	}
	d.Channels, d.ChannelsNote, err = c.channelsOf(ctx, d.Consumers)
	if err != nil {
		return nil, err
	}
	d.Publishers, d.PublishersNote, err = c.publishersOf(ctx, ref, s.Overview.RatesMode)
	if err != nil {
		return nil, err
	}
	d.UnackedAllowed, d.UnackedUnlimited = unackedAllowed(d.Consumers, d.Channels)
	for _, f := range domain.Lint(s) {
		if f.Vhost == vhost && f.Queue == name {
			d.Findings = append(d.Findings, f)
		}
	}
	d.Depth = levels(raw.MessagesDetails.Samples)
	if m := raw.MessageStats; m != nil {
		d.PublishRates = rates(m.Publish.Samples)
		d.AckRates = rates(m.Ack.Samples, m.DeliverNoAck.Samples, m.GetNoAck.Samples)
	}
	d.TakenAt = time.Now()
	d.StatsAge = s.Overview.StatsInterval + d.TakenAt.Sub(start)
	return d, nil
}

// channelsOf reads the channels the consumers use.
func (c *Client) channelsOf(ctx context.Context, cons []domain.Consumer) ([]domain.Channel, string, error) {
	var names []string
	seen := map[string]bool{}
	for _, co := range cons {
		if co.Channel != "" && !seen[co.Channel] {
			seen[co.Channel] = true
			names = append(names, co.Channel)
		}
	}
	got := make([]*domain.Channel, len(names))
	notes := make([]string, len(names))
	err := forEach(ctx, len(names), maxParallel, func(ctx context.Context, i int) error {
		var r rawChannel
		err := c.get(ctx, "channels/"+esc(names[i]), nil, &r)
		if n, ok := channelsUnavailable(err); ok {
			notes[i] = n
			return nil
		}
		if errors.Is(err, domain.ErrNotFound) {
			return nil // closed meanwhile
		}
		if err != nil {
			return err
		}
		ch := r.channel()
		got[i] = &ch
		return nil
	})
	var (
		out  []domain.Channel
		note string
	)
	for i, ch := range got {
		if ch != nil {
			out = append(out, *ch)
		}
		if notes[i] != "" {
			note = notes[i]
		}
	}
	return out, note, err
}

// unackedAllowed sums the prefetch limits of the consumers that must ack.
// A consumer without its own limit is bound by its channel's global
// prefetch (counted once per channel), or by nothing.
func unackedAllowed(cons []domain.Consumer, chans []domain.Channel) (allowed int64, unlimited bool) {
	byName := make(map[string]domain.Channel, len(chans))
	for _, ch := range chans {
		byName[ch.Name] = ch
	}
	counted := map[string]bool{}
	for _, co := range cons {
		if !co.AckRequired {
			continue
		}
		if co.PrefetchCount > 0 {
			allowed += int64(co.PrefetchCount)
			continue
		}
		ch, ok := byName[co.Channel]
		if ok && ch.GlobalPrefetch > 0 {
			if !counted[ch.Name] {
				counted[ch.Name] = true
				allowed += int64(ch.GlobalPrefetch)
			}
			continue
		}
		unlimited = true
	}
	return allowed, unlimited
}

// levels turns depth samples into history, oldest first.
func levels(raw []rawSample) []domain.Sample {
	out := make([]domain.Sample, 0, len(raw))
	for _, s := range raw {
		out = append(out, domain.Sample{At: time.UnixMilli(s.Timestamp), Value: s.Sample})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// rates turns counter samples (summed across series) into per-second
// rates between consecutive samples, oldest first.
func rates(series ...[]rawSample) []domain.Sample {
	sum := map[int64]float64{}
	for _, s := range series {
		for _, p := range s {
			sum[p.Timestamp] += p.Sample
		}
	}
	ts := make([]int64, 0, len(sum))
	for t := range sum {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	var out []domain.Sample
	for i := 1; i < len(ts); i++ {
		dt := float64(ts[i]-ts[i-1]) / 1000
		if dt <= 0 {
			continue
		}
		v := (sum[ts[i]] - sum[ts[i-1]]) / dt
		if v < 0 {
			v = 0 // a counter reset (queue re-declared)
		}
		out = append(out, domain.Sample{At: time.UnixMilli(ts[i]), Value: v})
	}
	return out
}
