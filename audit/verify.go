package audit

import (
	"context"
	"errors"
	"fmt"
)

// Result is the outcome of Verify. When the chain breaks, BrokenSeq is the
// first seq that cannot be trusted and Reason says why; every record before
// it is intact. OK holds when the chain is intact and so is everything
// VerifyOptions asked for.
type Result struct {
	OK        bool
	Records   int    // records checked and found intact
	LastSeq   int64  // seq of the last intact record
	LastHash  string // its hash; "" when no record is intact
	BrokenSeq int64
	Reason    string
	// Expect is what became of VerifyOptions.ExpectHead; nil without one.
	Expect *HeadCheck
	// Checkpoints is what Verify found of the signed checkpoints; nil
	// without VerifyOptions.Signers.
	Checkpoints *CheckpointReport
	// CrashTail says the chain breaks only at a last line that a write
	// of warren's left when it was killed, as the file store's journal
	// proves: the next append sets it aside (torn.go).
	CrashTail bool
}

// HeadCheck is the verdict on a head the operator kept.
type HeadCheck struct {
	Head      Head
	Held      bool   // the log holds the record, with that hash
	Following int    // intact records after it, when held
	Problem   string // why it is not held; "" when held or not checked
}

// VerifyOptions asks Verify for more than an intact chain.
type VerifyOptions struct {
	// ExpectHead is a head kept from before: the log must still hold
	// that record with that hash, which proves nothing was cut from its
	// end since and that it was not rewritten up to there.
	ExpectHead *Head
	// Signers, when set, are the keys trusted to sign checkpoints: every
	// checkpoint must carry a good signature by one of them, and the
	// records after the last one are reported unsigned.
	Signers *AllowedSigners
}

// Head is the last intact record's head; ok is false when there is none.
func (r Result) Head() (h Head, ok bool) {
	return Head{Seq: r.LastSeq, Hash: r.LastHash}, r.LastSeq > 0
}

// String is the verdict in one line: the break, else what was found
// instead of the expected head, else ok.
func (r Result) String() string {
	switch {
	case r.BrokenSeq > 0:
		return fmt.Sprintf("broken at seq %d: %s", r.BrokenSeq, r.Reason)
	case r.Expect != nil && r.Expect.Problem != "":
		return r.Expect.Problem
	}
	return fmt.Sprintf("ok: %d records, chain intact", r.Records)
}

// Lines are the verdict, what became of the expected head when the
// verdict does not say it, and the head last (docs/OPERATIONS.md).
func (r Result) Lines() []string {
	lines := []string{r.String()}
	if r.CrashTail {
		lines = append(lines, "the last line is the start of a record warren was writing when it was killed (its journal shows it): the next command that writes sets it aside")
	}
	if e := r.Expect; e != nil {
		switch {
		case e.Held && e.Following == 0:
			lines = append(lines, fmt.Sprintf("the expected head seq %d is there, and is the last record", e.Head.Seq))
		case e.Held && e.Following == 1:
			lines = append(lines, fmt.Sprintf("the expected head seq %d is there, and 1 record follows it", e.Head.Seq))
		case e.Held:
			lines = append(lines, fmt.Sprintf("the expected head seq %d is there, and %d records follow it", e.Head.Seq, e.Following))
		case r.BrokenSeq > 0 && e.Problem != "":
			lines = append(lines, e.Problem)
		case r.BrokenSeq > 0:
			lines = append(lines, fmt.Sprintf("the expected head seq %d was not checked: the chain breaks before it", e.Head.Seq))
		}
	}
	if r.Checkpoints != nil {
		lines = append(lines, r.Checkpoints.String())
	}
	return append(lines, r.headLine())
}

func (r Result) headLine() string {
	h, ok := r.Head()
	switch {
	case ok && r.BrokenSeq > 0:
		return "head " + h.String() + " (the last record before the break)"
	case ok:
		return "head " + h.String()
	case r.BrokenSeq > 0:
		return "head: no intact record"
	}
	return "head: empty log"
}

// Verify walks the whole chain: seqs must run 1, 2, 3… without gaps, each
// prev_hash must equal the hash before it, and each hash must match the
// record's content. It stops at the first break. The error is for failures
// to read the store at all; a damaged entry is a broken Result.
func Verify(ctx context.Context, s Store) (Result, error) {
	return VerifyWith(ctx, s, VerifyOptions{})
}

// VerifyWith is Verify, and checks what opt asks for as well.
func VerifyWith(ctx context.Context, s Store, opt VerifyOptions) (Result, error) {
	c := chainCheck{signers: opt.Signers}
	if opt.ExpectHead != nil {
		c.res.Expect = &HeadCheck{Head: *opt.ExpectHead}
	}
	if opt.Signers != nil {
		c.res.Checkpoints = &CheckpointReport{}
	}
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
		if ct, ok := s.(crashTailer); ok && ce.Partial {
			c.res.CrashTail = ct.crashTail(ctx)
		}
	case errors.Is(err, errStop), err == nil:
	default:
		return Result{}, err
	}
	c.endExpect()
	if cp := c.res.Checkpoints; cp != nil {
		cp.Unsigned = int(c.res.LastSeq - cp.LastSeq)
	}
	c.res.OK = !c.broken && (c.res.Expect == nil || c.res.Expect.Held)
	return c.res, nil
}

type chainCheck struct {
	res      Result
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

// count is n and a noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
