package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/format"
)

// Fleet reads every context of the config at once, for the fleet view
// and `status --all-contexts --json` (docs/ARCHITECTURE.md §3.6): one
// management client per context, kept between reads, and the overview's
// judge per context, so the queues in trouble are judged over time as
// the overview judges them.
type Fleet struct {
	s     Settings
	names []string
	envs  map[string]string

	mu      sync.Mutex
	clients map[string]Management
	vhosts  map[string]string // the vhost each context names; "" every one
	judges  map[string]*trouble.Tracker
	last    map[string]int64 // the DLQ total read last
}

// DefaultFleetTimeout bounds one context's read: a context that does
// not answer within it is shown as such, and holds no other back.
const DefaultFleetTimeout = 8 * time.Second

// NewFleet reads the config s names; it needs one with contexts.
func NewFleet(s Settings) (*Fleet, error) {
	if s.Err == nil {
		s.Err = io.Discard
	}
	f := New(s)
	if _, err := f.Config(); err != nil {
		return nil, err
	}
	file := f.ConfigFile()
	if file == nil {
		return nil, Usage(errors.New("the fleet reads the contexts of a config file, and none was found (warren config init writes one)"))
	}
	fl := &Fleet{s: s, names: file.ContextNames(), envs: map[string]string{}, clients: map[string]Management{}, vhosts: map[string]string{},
		judges: map[string]*trouble.Tracker{}, last: map[string]int64{}}
	for _, n := range fl.names {
		if c, err := file.Context(n); err == nil {
			fl.envs[n] = c.Environment
		}
	}
	return fl, nil
}

// Contexts are the contexts the fleet reads, in the config's order.
func (f *Fleet) Contexts() []string { return append([]string(nil), f.names...) }

// Environment is the environment the config gives context name.
func (f *Fleet) Environment(name string) string { return f.envs[name] }

// ReadAll reads every context in parallel, each within timeout.
func (f *Fleet) ReadAll(ctx context.Context, timeout time.Duration) []domain.FleetRow {
	rows := make([]domain.FleetRow, len(f.names))
	var wg sync.WaitGroup
	for i, n := range f.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			rows[i] = f.Read(rctx, n)
		}()
	}
	wg.Wait()
	return rows
}

// client is the context's management client, made on first use, and
// the vhost the context names: its row counts what its dashboard shows.
func (f *Fleet) client(name string) (Management, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.clients[name]; m != nil {
		return m, f.vhosts[name], nil
	}
	s := f.s
	s.ContextName, s.Target, s.ReadOnly, s.Err = name, config.Target{}, true, io.Discard
	c, m, err := New(s).Management()
	if err != nil {
		return nil, "", err
	}
	f.clients[name], f.vhosts[name] = m, c.Vhost
	return m, c.Vhost, nil
}

// Read reads one context: its broker, nodes and queues, judged.
func (f *Fleet) Read(ctx context.Context, name string) domain.FleetRow {
	row := domain.FleetRow{Context: name, Environment: f.envs[name], Alarms: []string{}}
	m, vhost, err := f.client(name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.Vhost = vhost
	snap, err := m.Snapshot(ctx, domain.SnapshotOptions{Vhost: vhost, AllRates: true})
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
			// Said once: the client's error names the timeout when it
			// saw it.
			err = fmt.Errorf("no answer within the timeout: %w", err)
		}
		row.Err = err.Error()
		return row
	}
	row.ReadAt = snap.TakenAt
	row.Cluster, row.Version = snap.Overview.ClusterName, snap.Overview.RabbitMQVersion
	row.Nodes = len(snap.Nodes)
	for _, n := range snap.Nodes {
		if n.Running {
			row.NodesRunning++
		}
	}
	alarms := format.NodeAlarms(snap.Nodes)
	for _, a := range alarms {
		row.Alarms = append(row.Alarms, a)
	}
	sort.Strings(row.Alarms)
	f.mu.Lock()
	judge := f.judges[name]
	if judge == nil {
		judge = trouble.New(trouble.DefaultWindow)
		f.judges[name] = judge
	}
	f.mu.Unlock()
	judge.Observe(snap.TakenAt, snap.Queues)
	row.Queues = len(snap.Queues)
	for i, q := range snap.Queues {
		level, _ := format.Assess(q, judge.MarksAt(i), judge.Window(), alarms[q.Node])
		switch level {
		case format.ActNow:
			row.InTrouble++
		case format.WorthALook:
			row.WorthALook++
		}
		if !q.IsDLQ() {
			continue
		}
		row.DLQMessages += q.Messages
		if q.Messages > row.DeepestMessages {
			row.DeepestDLQ, row.DeepestMessages = q.Vhost+"/"+q.Name, q.Messages
		}
		if ts := q.HeadMessageTimestamp; ts != nil && q.Messages > 0 && (row.OldestDeadLetter == nil || ts.Before(*row.OldestDeadLetter)) {
			t := *ts
			row.OldestDeadLetter = &t
		}
	}
	f.mu.Lock()
	if prev, ok := f.last[name]; ok {
		growth := row.DLQMessages - prev
		row.Growth = &growth
	}
	f.last[name] = row.DLQMessages
	f.mu.Unlock()
	return row
}
