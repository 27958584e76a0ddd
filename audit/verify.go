package audit

import (
	"context"
	"errors"
	"fmt"
)

// Result is the outcome of Verify. When OK is false, BrokenSeq is the first
// seq that cannot be trusted and Reason says why; every record before it is
// intact.
type Result struct {
	OK        bool
	Records   int   // records checked and found intact
	LastSeq   int64 // seq of the last intact record
	BrokenSeq int64
	Reason    string
}

func (r Result) String() string {
	if r.OK {
		return fmt.Sprintf("ok: %d records, chain intact", r.Records)
	}
	return fmt.Sprintf("broken at seq %d: %s", r.BrokenSeq, r.Reason)
}

// Verify walks the whole chain: seqs must run 1, 2, 3… without gaps, each
// prev_hash must equal the hash before it, and each hash must match the
// record's content. It stops at the first break. The error is for failures
// to read the store at all; a damaged entry is a broken Result.
func Verify(ctx context.Context, s Store) (Result, error) {
	var c chainCheck
	err := s.Scan(ctx, func(r Record) error {
		if !c.add(r) {
			return errStop
		}
		return nil
	})
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		c.breakAt(c.res.LastSeq+1, ce.Error())
	case errors.Is(err, errStop), err == nil:
	default:
		return Result{}, err
	}
	if c.broken {
		return c.res, nil
	}
	c.res.OK = true
	return c.res, nil
}

type chainCheck struct {
	res      Result
	prevHash string
	broken   bool
}

func (c *chainCheck) add(r Record) bool {
	want := c.res.LastSeq + 1
	switch {
	case r.Seq > want:
		c.breakAt(want, fmt.Sprintf("seq gap: expected %d, found %d (%d record(s) deleted)", want, r.Seq, r.Seq-want))
	case r.Seq < want:
		c.breakAt(want, fmt.Sprintf("seq out of order: expected %d, found %d", want, r.Seq))
	case r.PrevHash != c.prevHash && want == 1:
		c.breakAt(want, "broken link: the first record must have an empty prev_hash")
	case r.PrevHash != c.prevHash:
		c.breakAt(want, fmt.Sprintf("broken link: prev_hash %q does not match the hash of seq %d", short(r.PrevHash), want-1))
	case r.ComputeHash() != r.Hash:
		c.breakAt(want, "hash mismatch: the record was altered after it was written")
	default:
		c.res.Records++
		c.res.LastSeq = r.Seq
		c.prevHash = r.Hash
		return true
	}
	return false
}

func (c *chainCheck) breakAt(seq int64, reason string) {
	c.broken = true
	c.res.BrokenSeq = seq
	c.res.Reason = reason
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
