package domain

import (
	"encoding/json"
	"time"
)

// FleetRow is one context of the fleet view and of `status
// --all-contexts --json` (docs/ARCHITECTURE.md §3.6): its broker at a
// glance. Err is set, and the rest empty, when the context did not
// answer within its timeout.
type FleetRow struct {
	Context     string `json:"context"`
	Environment string `json:"environment,omitempty"`
	// Vhost is the one vhost the context names, whose queues alone the
	// row counts, as its dashboard shows them; "" for every vhost.
	Vhost string `json:"vhost,omitempty"`
	Err   string `json:"error,omitempty"`

	Cluster      string `json:"cluster,omitempty"`
	Version      string `json:"version,omitempty"`
	NodesRunning int    `json:"nodes_running"`
	Nodes        int    `json:"nodes"`
	// Alarms name the nodes down or in a memory or disk alarm.
	Alarms []string `json:"alarms"`
	Queues int      `json:"queues"`
	// InTrouble counts the queues to act on, WorthALook the others to
	// look at, as the overview judges them. What only a rise over time
	// shows (a DLQ growing, dead letters arriving) is judged from the
	// second read of a context on, never from one read alone.
	InTrouble  int `json:"in_trouble"`
	WorthALook int `json:"worth_a_look"`
	// DLQMessages are the dead letters of every DLQ; Growth how many
	// more than at the read before, nil when there was none to measure
	// against (a context's first read), never 0 for unknown.
	DLQMessages int64  `json:"dlq_messages"`
	Growth      *int64 `json:"dlq_growth"`
	// DeepestDLQ is the DLQ holding the most, with its depth.
	DeepestDLQ      string `json:"deepest_dlq,omitempty"`
	DeepestMessages int64  `json:"deepest_dlq_messages"`
	// OldestDeadLetter is the timestamp of the oldest DLQ head message
	// whose publisher set one; nil when none is known.
	OldestDeadLetter *time.Time `json:"oldest_dead_letter,omitempty"`
	// ReadAt is when the broker answered; absent where it did not.
	ReadAt time.Time `json:"read_at,omitzero"`
}

// MarshalJSON writes a context that did not answer with its figures
// null: a script adding up dead letters must not read its 0 as none.
func (r FleetRow) MarshalJSON() ([]byte, error) {
	type plain FleetRow
	if r.Err == "" {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		Context     string   `json:"context"`
		Environment string   `json:"environment,omitempty"`
		Vhost       string   `json:"vhost,omitempty"`
		Err         string   `json:"error"`
		Nodes       *int     `json:"nodes"`
		Running     *int     `json:"nodes_running"`
		Alarms      []string `json:"alarms"`
		Queues      *int     `json:"queues"`
		InTrouble   *int     `json:"in_trouble"`
		WorthALook  *int     `json:"worth_a_look"`
		DLQMessages *int64   `json:"dlq_messages"`
		Growth      *int64   `json:"dlq_growth"`
		Deepest     *int64   `json:"deepest_dlq_messages"`
	}{Context: r.Context, Environment: r.Environment, Vhost: r.Vhost, Err: r.Err})
}
