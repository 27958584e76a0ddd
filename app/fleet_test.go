package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
)

// risingDLQ is a management API whose one DLQ holds two more dead
// letters at each read.
type risingDLQ struct{ reads int64 }

func (r *risingDLQ) Snapshot(context.Context, domain.SnapshotOptions) (*domain.Snapshot, error) {
	r.reads++
	return &domain.Snapshot{TakenAt: time.Date(2026, 12, 5, 3, 0, int(r.reads), 0, time.UTC),
		Nodes: []domain.Node{{Name: "rabbit@a", Running: true}},
		Queues: []domain.Queue{
			{Vhost: "/", Name: "orders.dlq", Type: "classic", Messages: 10 + 2*r.reads, Ready: 10 + 2*r.reads,
				DLQOf: []domain.QueueRef{{Vhost: "/", Name: "orders"}}},
		}}, nil
}

func (r *risingDLQ) Overview(context.Context) (*domain.Overview, error) {
	return &domain.Overview{}, nil
}

func (r *risingDLQ) Channels(context.Context, string) (*domain.ChannelList, error) {
	return &domain.ChannelList{}, nil
}

// A context's dead letters grow against the read before: its first read
// has none to measure against, and says the growth is unknown, not 0.
func TestTheFleetMeasuresGrowthFromTheSecondRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warren.toml")
	text := "current_context = \"a\"\n[contexts.a]\namqp_url = \"amqp://127.0.0.1:1/\"\nmanagement_url = \"http://127.0.0.1:1\"\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	broker := &risingDLQ{}
	fl, err := NewFleet(Settings{ConfigPath: path, NewManagement: func(*config.Context) (Management, error) { return broker, nil }})
	if err != nil {
		t.Fatal(err)
	}
	first := fl.Read(context.Background(), "a")
	if first.Err != "" || first.DLQMessages != 12 || first.Growth != nil {
		t.Fatalf("first read: %+v, want 12 dead letters and the growth unknown (nil)", first)
	}
	second := fl.Read(context.Background(), "a")
	if second.DLQMessages != 14 || second.Growth == nil || *second.Growth != 2 {
		t.Fatalf("second read: %+v, want 14 dead letters, 2 more than the read before", second)
	}
}
