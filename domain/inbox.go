package domain

import "time"

// InboxStatus is a dead letter's inbox status (docs/ARCHITECTURE.md §5: applied, pending
// or unknown).
type InboxStatus string

// The three statuses.
const (
	InboxApplied InboxStatus = "applied"
	InboxPending InboxStatus = "pending"
	InboxUnknown InboxStatus = "unknown"
)

// InboxStatusOf maps a page's lookup result to one ID's status: Unknown when
// the lookup failed or never ran, Applied when the ID was found, Pending
// otherwise.
func InboxStatusOf(found map[string]time.Time, err error, id string) InboxStatus {
	if err != nil || found == nil {
		return InboxUnknown
	}
	if _, ok := found[id]; ok {
		return InboxApplied
	}
	return InboxPending
}

// Applied returns the status as the filter language's applied field:
// true, false, or nil when unknown.
func (s InboxStatus) Applied() *bool {
	var b bool
	switch s {
	case InboxApplied:
		b = true
	case InboxPending:
		b = false
	default:
		return nil
	}
	return &b
}

// Effect is the inbox's pace: how many effects were committed in the
// window, and when the last one was, by the database's clock.
type Effect struct {
	Window time.Duration
	Count  int64
	// Rate is effects per second over the window.
	Rate float64
	// Last is the newest effect; zero when the table is empty.
	Last time.Time
	// Now is the database's clock when it answered.
	Now time.Time
}

// LastAge is how long ago the last effect was committed; false when
// there has been none.
func (e Effect) LastAge() (time.Duration, bool) {
	if e.Last.IsZero() {
		return 0, false
	}
	return max(e.Now.Sub(e.Last), 0), true
}
