package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/warrenops/warren/domain"
)

// VerifyOptions asks Verify for more than an intact chain.
type VerifyOptions struct {
	// ExpectHead is a head kept from before: the log must still hold
	// that record with that hash, which proves nothing was cut from its
	// end since and that it was not rewritten up to there.
	ExpectHead *domain.AuditHead
	// Signers, when set, are the keys trusted to sign checkpoints: every
	// checkpoint must carry a good signature by one of them, and the
	// records after the last one are reported unsigned.
	Signers *AllowedSigners
	// Each, when set, is given every record that verifies, in order, as
	// it is read: a caller that acts on what the log says reads it once,
	// and keeps of it what it needs.
	Each func(Record)
}

// Verify walks the whole chain: seqs must run 1, 2, 3… without gaps, each
// prev_hash must equal the hash before it, and each hash must match the
// record's content. It stops at the first break. The error is for failures
// to read the store at all; a damaged entry is a broken Result.
func Verify(ctx context.Context, s Store) (domain.AuditResult, error) {
	return VerifyWith(ctx, s, VerifyOptions{})
}

// VerifyWith is Verify, and checks what opt asks for as well.
func VerifyWith(ctx context.Context, s Store, opt VerifyOptions) (domain.AuditResult, error) {
	c := chainCheck{signers: opt.Signers}
	if opt.ExpectHead != nil {
		c.res.Expect = &domain.HeadCheck{Head: *opt.ExpectHead}
	}
	if opt.Signers != nil {
		c.res.Checkpoints = &domain.CheckpointReport{}
	}
	err := s.Scan(ctx, func(r Record) error {
		if !c.add(r) {
			return errStop
		}
		if opt.Each != nil {
			opt.Each(r)
		}
		return nil
	})
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		c.breakAt(c.res.LastSeq+1, ce.Error())
		if ct, ok := s.(crashTailer); ok && ce.Partial {
			c.res.CrashTail = ct.crashTail(ctx)
		}
	case errors.Is(err, errStop), err == nil:
	default:
		return domain.AuditResult{}, err
	}
	c.endExpect()
	if cp := c.res.Checkpoints; cp != nil {
		cp.Unsigned = int(c.res.LastSeq - cp.LastSeq)
	}
	c.res.OK = !c.broken && (c.res.Expect == nil || c.res.Expect.Held)
	return c.res, nil
}

type chainCheck struct {
	res      domain.AuditResult
	prevHash string
	broken   bool
	found    bool // the expected head's seq was reached
	signers  *AllowedSigners
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
	case !c.checkpoint(r):
	default:
		c.res.Records++
		c.res.LastSeq = r.Seq
		c.res.LastHash = r.Hash
		c.prevHash = r.Hash
		c.expect(r)
		return true
	}
	return false
}

// checkpoint checks r's signature when r is a checkpoint and signers
// were given; false breaks the chain at r.
func (c *chainCheck) checkpoint(r Record) bool {
	if c.signers == nil || !IsCheckpoint(r) {
		return true
	}
	principals, problem := checkCheckpoint(r, c.signers)
	if problem != "" {
		c.breakAt(r.Seq, problem)
		return false
	}
	cp := c.res.Checkpoints
	cp.Signed++
	cp.LastSeq, cp.Principals = r.Seq, principals
	return true
}

// expect compares an intact record with the expected head.
func (c *chainCheck) expect(r Record) {
	e := c.res.Expect
	switch {
	case e == nil:
	case r.Seq == e.Head.Seq:
		c.found = true
		if r.Hash != e.Head.Hash {
			e.Problem = fmt.Sprintf("the record at seq %d has hash sha256:%s, not the expected sha256:%s: the log was rewritten",
				r.Seq, short(r.Hash), short(e.Head.Hash))
		}
	case r.Seq > e.Head.Seq:
		e.Following++
	}
}

// endExpect judges the expected head once the scan is over. A log that
// ends before it was cut short; a chain that breaks before it says
// nothing of it.
func (c *chainCheck) endExpect() {
	e := c.res.Expect
	if e == nil {
		return
	}
	switch {
	case c.found:
		e.Held = e.Problem == ""
	case c.broken:
	case c.res.LastSeq == 0:
		e.Problem = fmt.Sprintf("the log is empty, but the expected head is seq %d: its records were removed", e.Head.Seq)
	default:
		e.Problem = fmt.Sprintf("the log ends at seq %d, before the expected head seq %d: records were removed from its end",
			c.res.LastSeq, e.Head.Seq)
	}
	if !e.Held {
		e.Following = 0
	}
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

// Watch checks a chain one record at a time, for a reader that reads on
// past a break (audit tail): Add reports whether the chain still holds
// with r, and Broken where and why it broke, once it has.
type Watch struct{ c chainCheck }

// Add checks r, the record after the last one added.
func (w *Watch) Add(r Record) bool {
	if w.c.broken {
		return false
	}
	return w.c.add(r)
}

// Broken is the first seq that cannot be trusted and why; ok is false
// while the chain holds.
func (w *Watch) Broken() (seq int64, reason string, ok bool) {
	return w.c.res.BrokenSeq, w.c.res.Reason, w.c.broken
}
