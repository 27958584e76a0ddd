package format

import (
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/ui/sanitize"
)

// HashMark prefixes a logical ID that is a content hash in a list, where
// there is no room to say so in words; HashLegend explains it.
const (
	HashMark   = "#"
	HashLegend = HashMark + " logical ID is a content hash"
)

// LogicalID is a dead letter's logical ID in a list: a content hash is
// marked, because two copies of one business message that differ by a
// byte get two hashes and will not be recognised as one.
func LogicalID(l dlq.DeadLetter) string {
	if l.LogicalIDFrom == dlq.IDHash {
		return HashMark + sanitize.Text(l.LogicalID)
	}
	return sanitize.Text(l.LogicalID)
}

// LogicalIDSource is a dead letter's logical ID with where it came from,
// for a view of one message.
func LogicalIDSource(l dlq.DeadLetter) string {
	id := sanitize.Text(l.LogicalID)
	switch {
	case l.LogicalIDFrom == dlq.IDHash:
		return id + " (content hash: no configured ID found)"
	case l.LogicalIDFrom != "":
		return id + " (from " + sanitize.Text(string(l.LogicalIDFrom)) + ")"
	}
	return id
}

// MatchesLogicalID reports whether s names the dead letter's logical ID,
// as typed or as a list shows it, so an ID copied from a list works.
func MatchesLogicalID(l dlq.DeadLetter, s string) bool {
	return s == l.LogicalID || (l.LogicalIDFrom == dlq.IDHash && s == HashMark+l.LogicalID)
}
