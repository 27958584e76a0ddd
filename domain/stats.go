package domain

import "time"

// OtherKey collects reasons or origins beyond the first MaxStatKeys, and
// NoneKey messages that carry none.
const (
	OtherKey = "(other)"
	NoneKey  = "(none)"
)

// Stats summarise a whole DLQ (docs/ARCHITECTURE.md §4.1, §9). Only counters are
// kept, never bodies or per-message records.
type Stats struct {
	Queue QueueInfo
	// Expected is the queue's depth when the scan began, -1 for a stream
	// (read to its tail).
	Expected int
	Total    int
	Bytes    int64
	// Attempts counts messages per attempt count (MaxAttemptsKey holds
	// that many or more).
	Attempts map[int]int
	Reasons  map[string]int
	Origins  map[string]int
	// Groups counts the failure groups (docs/ARCHITECTURE.md §4.12);
	// Conventions counts messages by the convention read, NoneKey for
	// those that follow none.
	Groups      *Groups
	Conventions map[string]int
	ReplayLoops int
	Quarantined int
	// MarksClaimed counts messages whose warren marks name an operation
	// the audit log does not know (not in Quarantined or ReplayLoops).
	MarksClaimed int
	// OldestDeadLettered and NewestDeadLettered span the messages that
	// carry a dead-lettering time; NoTime counts those that do not.
	OldestDeadLettered, NewestDeadLettered time.Time
	NoTime                                 int
	// Complete is false when the scan stopped before reading Expected
	// messages (consumers or expiry took some meanwhile).
	Complete bool
	// Unread counts the messages the queue held ready, once the scan had
	// read what it would, that it did not read (ReadyAfterStart).
	Unread int
	// Held counts the messages other clients held unacknowledged when the
	// scan started, which it could not read (HeldElsewhere): a caller
	// that holds some of the queue itself (a browse) counts its own in.
	Held  int
	Notes []string
	Took  time.Duration
}

// ReadyAfterStart says where messages that became ready after a reader
// of the whole queue started come from, as the scan and the export say it.
const ReadyAfterStart = "new dead letters, or messages another client held and gave back, such as an export or a browse that had just ended"

// Bounds that keep a scan's memory independent of the queue's size and
// of what hostile headers contain.
const (
	MaxStatKeys    = 1000 // distinct reasons or origins; the rest count as OtherKey
	MaxAttemptsKey = 1000 // attempts above this count under this key
)

// Bump counts key in m: NoneKey for "", OtherKey once m holds MaxStatKeys.
func Bump(m map[string]int, key string) {
	switch _, ok := m[key]; {
	case key == "":
		key = NoneKey
	case !ok && len(m) >= MaxStatKeys:
		key = OtherKey
	}
	m[key]++
}
