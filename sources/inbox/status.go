package inbox

import "time"

// Status is a dead letter's inbox status (docs/ARCHITECTURE.md §5: applied, pending
// or unknown).
type Status string

// The three statuses.
const (
	Applied Status = "applied"
	Pending Status = "pending"
	Unknown Status = "unknown"
)

// StatusOf maps a page's lookup result to one ID's status: Unknown when
// the lookup failed or never ran, Applied when the ID was found, Pending
// otherwise.
func StatusOf(found map[string]time.Time, err error, id string) Status {
	if err != nil || found == nil {
		return Unknown
	}
	if _, ok := found[id]; ok {
		return Applied
	}
	return Pending
}

// Applied returns the status as the filter language's applied field:
// true, false, or nil when unknown.
func (s Status) Applied() *bool {
	var b bool
	switch s {
	case Applied:
		b = true
	case Pending:
		b = false
	default:
		return nil
	}
	return &b
}
