package domain

import (
	"fmt"
	"time"
)

// AuditHead is where a chain ends: its last record's seq and hash. The chain
// alone cannot show what is missing at its end: a log cut short, or
// rewritten and rehashed from its first record, is a valid chain too. An
// operator who keeps a head (in the ticket of an operation, beside a
// backup) can later prove the log still holds that record, unchanged,
// with VerifyOptions.ExpectHead.
type AuditHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"` // hex, as the record's hash field holds it
}

// String is the head as warren prints it: "seq 42 sha256:9f86d081…".
func (h AuditHead) String() string { return fmt.Sprintf("seq %d sha256:%s", h.Seq, h.Hash) }

// Outcomes of the records an operation writes (see the package
// documentation for the sequence).
const (
	OutcomeIntent         = "intent"
	OutcomeConfirmed      = "confirmed"
	OutcomeReturned       = "returned"
	OutcomeNacked         = "nacked"
	OutcomeUnknown        = "unknown"
	OutcomeSkippedApplied = "skipped_applied"
	OutcomeFinal          = "final"
	// OutcomePublishing names messages a walk is about to
	// publish, written before it does: after a crash, a message named
	// here but not confirmed may have a copy at its destination.
	OutcomePublishing = "publishing"
	// OutcomeResumed marks where `dlq resume` took an interrupted
	// operation up; OutcomeDeduplicated names the DLQ twins of recorded
	// confirms that it removed.
	OutcomeResumed      = "resumed"
	OutcomeDeduplicated = "deduplicated"
	// OutcomeExported counts the messages an export wrote to its file,
	// in the one record it makes (a final record, no intent: an export
	// moves nothing).
	OutcomeExported = "exported"
)

// MessageOutcomes lists the per-message outcomes in display order.
var MessageOutcomes = []string{
	OutcomeConfirmed, OutcomeReturned, OutcomeNacked, OutcomeUnknown, OutcomeNotSent, OutcomeSkippedApplied, OutcomeDeduplicated,
}

// OperationSummary is one operation as audit tail and the audit screen show
// it. Finished is nil while no final record exists: the operation is still
// running, or it was interrupted.
type OperationSummary struct {
	Operation string
	Action    string
	Vhost     string
	Queue     string
	Target    string
	Operator  string
	Started   time.Time
	Finished  *time.Time
	// Selected is how many the operation chose to move: the intent's
	// count, or, for a walk that streamed the queue without a preview
	// (whose intent can only count what it would read), its final
	// record's; 0 when absent.
	Selected int
	Counts   map[string]int // messages per outcome, from the outcome records
	FirstSeq int64
	LastSeq  int64
	// Halted is why the operation's last run halted itself (a staged
	// replay); "" when it did not, or a resume took it up since.
	Halted string
	// Stages are the verdicts its stages reached, in order.
	Stages []StageVerdict
	// Cancelled says its final record was written by a run the operator
	// cancelled: what it did not send stayed in the DLQ.
	Cancelled bool
	// Failed is the error its final record says its run ended with (a
	// destination that refused a copy, a canary that could not be
	// judged); "" when it ended as planned.
	Failed string
}

// Incomplete reports an operation without a final record: running,
// interrupted, or halted.
func (s OperationSummary) Incomplete() bool { return s.Finished == nil }

// State is the operation's state in one word: done, cancelled (ended
// by the operator, the rest left in the DLQ), failed (ended by an
// error, the rest left in the DLQ), HALTED (a staged replay stopped
// itself, and `dlq resume` takes it up) or INCOMPLETE.
func (s OperationSummary) State() string {
	switch {
	case !s.Incomplete() && s.Cancelled:
		return "cancelled"
	case !s.Incomplete() && s.Failed != "":
		return "failed"
	case !s.Incomplete():
		return "done"
	case s.Halted != "":
		return "HALTED"
	}
	return "INCOMPLETE"
}

// AuditResult is the outcome of audit.Verify. When the chain breaks, BrokenSeq is the
// first seq that cannot be trusted and Reason says why; every record before
// it is intact. OK holds when the chain is intact and so is everything
// VerifyOptions asked for.
type AuditResult struct {
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
	Head      AuditHead
	Held      bool   // the log holds the record, with that hash
	Following int    // intact records after it, when held
	Problem   string // why it is not held; "" when held or not checked
}

// Head is the last intact record's head; ok is false when there is none.
func (r AuditResult) Head() (h AuditHead, ok bool) {
	return AuditHead{Seq: r.LastSeq, Hash: r.LastHash}, r.LastSeq > 0
}

// String is the verdict in one line: the break, else what was found
// instead of the expected head, else ok.
func (r AuditResult) String() string {
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
func (r AuditResult) Lines() []string {
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

func (r AuditResult) headLine() string {
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

// count is n and a noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// CheckpointReport is what Verify found of the signed checkpoints.
type CheckpointReport struct {
	Signed     int    // checkpoints whose signature holds
	LastSeq    int64  // seq of the last of them; 0 when none
	Principals string // who signed it, as the allowed signers name them
	Unsigned   int    // intact records after it
}

func (c CheckpointReport) String() string {
	switch {
	case c.Signed == 0 && c.Unsigned == 0:
		return "no signed checkpoint, and no record to sign"
	case c.Signed == 0:
		return fmt.Sprintf("no signed checkpoint: %s not signed", areCount(c.Unsigned, "record"))
	case c.Unsigned == 0:
		return fmt.Sprintf("the last record is the checkpoint at seq %d, signed by %s", c.LastSeq, c.Principals)
	}
	return fmt.Sprintf("%s after the last signed checkpoint at seq %d %s not signed; that checkpoint is signed by %s",
		count(c.Unsigned, "record"), c.LastSeq, isAre(c.Unsigned), c.Principals)
}

func areCount(n int, noun string) string { return count(n, noun) + " " + isAre(n) }

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
