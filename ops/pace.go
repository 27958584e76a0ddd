package ops

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/time/rate"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/sanitize"
)

// The consumers' pace (--rate auto, docs/ARCHITECTURE.md §4.13 "Canary, ramp
// and halt"): copies go no faster than the destination's consumers take
// them, net of what other publishers add, so its depth stays near where
// it was when the run started. Every paceTick the destination's depth is
// read (a passive declare: exact, at once); what the consumers took in
// the tick is what was published minus what the depth gained. While no
// backlog forms the pace grows by half each tick; once it forms, the
// pace is what the consumers took, less what drains the backlog within
// paceDrain. The management API's rates, read at the dashboard's
// refresh, name the consumers' ack rate and the other arrivals.

// ErrNoPace means --rate auto found no consumer to pace by.
var ErrNoPace = errors.New("--rate auto: no consumer sets the pace")

// Limits and timing of the automatic pace.
const (
	PaceFloor   = 1.0     // messages per second: never slower
	PaceCeiling = 20000.0 // never faster
	paceStart   = 20.0
	paceTick    = 500 * time.Millisecond
	paceDrain   = 2 * time.Second
	paceRates   = 5 * time.Second
)

// PaceStatus is the pace and why, for the progress line.
type PaceStatus struct {
	Rate float64
	// Ack is the consumers' ack rate and Arrivals what other publishers
	// add, per second, from the management API; -1 until read.
	Ack, Arrivals float64
	// Took is what the consumers took per second in the last ticks, net
	// of other arrivals: the figure the pace follows.
	Took         float64
	Depth, Start int
}

// Why says the pace and what it rests on: "pace 140/s: consumers take
// 141/s net (API: ack 180/s, arrivals 40/s) · depth 12, 0 at the start".
// What the consumers take is measured here, tick by tick; the
// management API's rates, which lag by a sample or two, say how it
// splits into acks and other publishers' arrivals.
func (s PaceStatus) Why() string {
	if s.Rate == 0 {
		return ""
	}
	why := fmt.Sprintf("pace %.0f/s: consumers take %.0f/s net", s.Rate, s.Took)
	if s.Ack >= 0 {
		why += fmt.Sprintf(" (API: ack %.0f/s, arrivals %.0f/s)", s.Ack, s.Arrivals)
	}
	return why + fmt.Sprintf(" · depth %d, %d at the start", s.Depth, s.Start)
}

// autoPace is the actions.Pacer of --rate auto.
type autoPace struct {
	o    *Ops
	t    *Target
	snap *domain.Snapshot
	conn *amqp.Connection
	// ch reads the depth; chMu keeps Wait's first read and follow's
	// apart.
	chMu sync.Mutex
	ch   *amqp.Channel

	mu      sync.Mutex
	queues  []domain.QueueRef
	has     map[domain.QueueRef]bool
	seen    map[actions.Destination]bool
	limiter *rate.Limiter
	status  PaceStatus
	sent    int
	// rebase tells follow that queues joined: their depth is no backlog
	// of the run's, so the next tick only takes the new depth.
	rebase bool
	// err ends the run: the depth could not be read for paceLostAfter
	// ticks, so nothing says how fast the consumers go.
	err  error
	stop chan struct{}
	done chan struct{}
}

// paceLostAfter is how many ticks in a row the depth may not be read
// before the pace gives up.
const paceLostAfter = 6

// newPace opens the pacer of a run on t: a connection of its own for
// the depth reads.
func (o *Ops) newPace(ctx context.Context, t *Target) (*autoPace, error) {
	snap, err := o.c.Mgmt.Snapshot(ctx, domain.SnapshotOptions{Vhost: t.Ref.Vhost})
	if err != nil {
		return nil, fmt.Errorf("reading the vhost to pace the run: %w", err)
	}
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	return &autoPace{o: o, t: t, snap: snap, conn: conn, seen: map[actions.Destination]bool{}, has: map[domain.QueueRef]bool{},
		limiter: rate.NewLimiter(rate.Limit(paceStart), 1), status: PaceStatus{Rate: paceStart, Ack: -1}}, nil
}

// check refuses a destination no consumer takes from: nothing would
// set the pace.
func (p *autoPace) check(ctx context.Context, dest actions.Destination) ([]domain.QueueRef, error) {
	queues, err := p.o.queuesOf(ctx, p.t.Ref.Vhost, p.snap, dest)
	if err != nil {
		return nil, err
	}
	if len(queues) == 0 {
		return nil, &StagingRefusal{Kind: ErrNoPace, Why: sanitize.Text(dest.String()) + " routes to no queue"}
	}
	if consumersOf(p.conn, queues) == 0 {
		names := make([]string, len(queues))
		for i, q := range queues {
			names[i] = sanitize.Text(q.Name)
		}
		return nil, &StagingRefusal{Kind: ErrNoPace, Why: strings.Join(names, ", ") + " has no consumer, so nothing says how fast it can take the copies",
			Do: "start its consumers, or pass --rate N"}
	}
	return queues, nil
}

// Wait admits the next copy at the pace; the first copy for a
// destination adds its queues to those watched.
func (p *autoPace) Wait(ctx context.Context, c actions.Copy) error {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return p.err
	}
	if !p.seen[c.Dest] {
		queues, err := p.check(ctx, c.Dest)
		if err != nil {
			p.mu.Unlock()
			return err
		}
		p.seen[c.Dest] = true
		var fresh []domain.QueueRef
		for _, q := range queues {
			if !p.has[q] {
				p.has[q] = true
				fresh = append(fresh, q)
			}
		}
		if len(fresh) > 0 {
			depth, err := p.depth(fresh)
			if err != nil {
				p.mu.Unlock()
				return fmt.Errorf("--rate auto: reading the depth of the destination: %w", err)
			}
			p.queues = append(p.queues, fresh...)
			// What the new queues hold already is no backlog of the run's.
			p.status.Start += depth
			p.status.Depth += depth
			p.rebase = true
		}
		if p.stop == nil {
			p.stop, p.done = make(chan struct{}), make(chan struct{})
			go p.follow(p.status.Depth)
		}
	}
	p.mu.Unlock()
	if err := p.limiter.Wait(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.sent++
	return nil
}

// follow re-reads the depth every tick and sets the pace.
func (p *autoPace) follow(last int) {
	defer close(p.done)
	tick := time.NewTicker(paceTick)
	defer tick.Stop()
	prev, lastSent, took, ours, failures := time.Now(), 0, -1.0, 0.0, 0
	var ratesAt time.Time
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			p.mu.Lock()
			queues, sent, rebase := p.queues, p.sent, p.rebase
			p.rebase = false
			p.mu.Unlock()
			depth, err := p.depth(queues)
			if err != nil {
				failures++
				p.mu.Lock()
				// Blind, the pace drops to its floor; blind for long, the
				// run stops (what is not sent stays in the DLQ).
				p.status.Rate = PaceFloor
				p.limiter.SetLimit(rate.Limit(PaceFloor))
				if failures >= paceLostAfter {
					p.err = fmt.Errorf("--rate auto: the destination's depth cannot be read (%v), so nothing says how fast its consumers go; publishing stopped", err)
				}
				p.mu.Unlock()
				continue
			}
			failures = 0
			if rebase {
				prev, last, lastSent = now, depth, sent
				continue
			}
			dt := now.Sub(prev).Seconds()
			sentRate := float64(sent-lastSent) / dt
			net := sentRate - float64(depth-last)/dt
			ours = 0.5*ours + 0.5*sentRate
			if took < 0 {
				took = net
			} else {
				took = 0.5*took + 0.5*net
			}
			prev, last, lastSent = now, depth, sent
			p.mu.Lock()
			r := nextPace(p.status.Rate, took, sentRate, depth-p.status.Start)
			p.status.Rate, p.status.Took, p.status.Depth = r, math.Max(took, 0), depth
			p.limiter.SetLimit(rate.Limit(r))
			p.limiter.SetBurst(max(1, int(r/20)))
			p.mu.Unlock()
			if now.Sub(ratesAt) >= paceRates {
				ratesAt = now
				p.readRates(queues, ours)
			}
		}
	}
}

// nextPace is the pace after a tick at pace r in which the consumers
// took took per second (net of other arrivals), the run sent sent per
// second, and the destination stood backlog above its starting depth.
func nextPace(r, took, sent float64, backlog int) float64 {
	switch {
	case backlog <= max(5, int(0.25*r)) && sent < 0.8*r:
		// The run did not use the pace (a verdict awaited, pages
		// read): nothing was learnt of the consumers.
	case backlog <= max(5, int(0.25*r)):
		// The consumers keep up: find out how much more they take.
		r = math.Max(r*1.5, took)
	default:
		// A backlog forms: what they take, less what drains it.
		r = took - float64(backlog)/paceDrain.Seconds()
	}
	return math.Min(math.Max(r, PaceFloor), PaceCeiling)
}

// readRates reads the consumers' ack rate and the other arrivals from
// the management API, for the progress line.
func (p *autoPace) readRates(queues []domain.QueueRef, ours float64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := p.o.c.Mgmt.Snapshot(ctx, domain.SnapshotOptions{Vhost: p.t.Ref.Vhost, RatesFor: queues, OnlyRows: true})
	if err != nil {
		return
	}
	var ack, pub float64
	for _, ref := range queues {
		if q := snap.Queue(ref); q != nil && q.HasRates {
			ack += q.AckRate
			pub += q.PublishRate
		}
	}
	p.mu.Lock()
	p.status.Ack, p.status.Arrivals = ack, math.Max(pub-ours, 0)
	p.mu.Unlock()
}

// Status is the pace and why.
func (p *autoPace) Status() PaceStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Close stops following and closes the pacer's connection.
func (p *autoPace) Close() error {
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-p.done
	}
	return p.conn.Close()
}

// depth is how many messages queues hold ready, summed, read with
// passive declares on the pacer's own channel: opened once, and again
// after a declare that failed closed it.
func (p *autoPace) depth(queues []domain.QueueRef) (int, error) {
	p.chMu.Lock()
	defer p.chMu.Unlock()
	n := 0
	for _, q := range queues {
		if p.ch == nil || p.ch.IsClosed() {
			ch, err := p.conn.Channel()
			if err != nil {
				return 0, err
			}
			p.ch = ch
		}
		info, err := p.ch.QueueDeclarePassive(q.Name, false, false, false, false, nil)
		if err != nil {
			p.ch = nil
			return 0, err
		}
		n += info.Messages
	}
	return n, nil
}

// checkPace refuses --rate auto before anything is asked when a
// destination has no consumer to pace by.
func (o *Ops) checkPace(ctx context.Context, t *Target, groups []actions.Group) error {
	p, err := o.newPace(ctx, t)
	if err != nil {
		return err
	}
	defer p.Close()
	for _, g := range groups {
		if _, err := p.check(ctx, g.Dest); err != nil {
			return err
		}
	}
	return nil
}
