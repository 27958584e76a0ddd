package actions

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// A quorum queue can lose acks that cross a change of its leader (a node
// stopped or back): the broker hands the deliveries back when the
// channel closes, and a copy recorded as confirmed has its source in the
// DLQ again. The sweep looks for those twins once the feed is closed and
// removes them, recorded first as deduplicated, before the final record
// (docs/ARCHITECTURE.md §4.4).

// twinKey is a Twin in 16 bytes, so a sweep over a million confirmed
// copies keeps tens of megabytes, not the IDs themselves. The death is
// in it too: the same event fanned out to two queues that share the DLQ
// dies twice with the same IDs and body, and moving one leaves the other
// no twin.
type twinKey [16]byte

func keyOf(t Twin) twinKey {
	h := sha256.New()
	for _, s := range []string{t.MessageID, t.LogicalID, t.BodySHA256, t.Death, t.Run} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k twinKey
	copy(k[:], h.Sum(nil))
	return k
}

// confirmedTwins counts the copies the run confirmed, by twin.
type confirmedTwins map[twinKey]int32

func (c confirmedTwins) add(fl flight) {
	c[keyOf(Twin{MessageID: fl.messageID, LogicalID: fl.logicalID, BodySHA256: fl.digest, Death: fl.death, Run: fl.run})]++
}

// take reports whether d is the twin of a confirmed copy not yet matched.
func (c confirmedTwins) take(d domain.DeadLetter) bool {
	k := keyOf(TwinOf(d))
	if c[k] <= 0 {
		return false
	}
	c[k]--
	return true
}

// sweep reads the queue once over src and removes the twins of the run's
// confirmed copies; everything else stays, returned by src's Close.
func (s *walker) sweep(ctx context.Context, src SweepSource) (int, error) {
	defer src.Close()
	removed := 0
	for {
		letters, end, err := src.Next(ctx, pageSize)
		if err != nil {
			return removed, err
		}
		var twins []flight
		for _, d := range letters {
			// A copy this run published that died again carries the
			// run's header, and its IDs and body are those of its
			// source: it is the only one of its message left, never a
			// twin. (A twin's key names the run that published its
			// source, so an earlier run's copy matches only its own
			// confirms.)
			if !s.ownCopy(d) && s.twins.take(d) {
				twins = append(twins, flightOf(d, audit.BodyDigest(d.Body), DeathDigest(d)))
			} else {
				src.Keep(1)
			}
		}
		if len(twins) > 0 {
			if err := s.log.outcome(ctx, domain.OutcomeDeduplicated, twins, nil); err != nil {
				return removed, fmt.Errorf("%w (%s): recording removed twins: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
			}
			tags := make([]uint64, len(twins))
			for i, fl := range twins {
				tags[i] = fl.tag
			}
			if err := src.AckAll(tags); err != nil {
				return removed, err
			}
			removed += len(twins)
		}
		if end {
			if removed > 0 {
				return removed, src.Sync()
			}
			return removed, nil
		}
	}
}

// SweepSource is a Source the sweep closes itself.
type SweepSource interface {
	Source
	Close() error
}
