package domain

import "fmt"

// Audit outcomes of a staged replay (docs/ARCHITECTURE.md, "Canary,
// ramp and halt"): each stage's verdict, and a halt, which leaves the
// operation open for `dlq resume`.
const (
	OutcomeStage  = "stage"
	OutcomeHalted = "halted"
	// OutcomeNotSent names messages recorded as publishing that a halt
	// kept back: none of them reached the broker.
	OutcomeNotSent = "not_sent"
)

// Verdicts of a stage.
const (
	VerdictPassed = "passed"
	VerdictHalted = "halted"
	// VerdictNoVerdict: nothing could judge the stage (no consumer on
	// the destination); the run halts.
	VerdictNoVerdict = "no_verdict"
	// VerdictUnjudged: the stage was not waited for (--canary-wait 0,
	// or the last stage, which the queue's end closed).
	VerdictUnjudged = "unjudged"
)

// StageVerdict is what one stage of a staged replay came to: stage 0 is
// the canary, then each stage ten times the one before, the last one
// what was left. The JSON fields are the command line's contract.
type StageVerdict struct {
	Stage int `json:"stage"`
	Size  int `json:"size"`
	// Applied copies are those whose logical ID the inbox reports;
	// FailedAgain died again (they carry this operation's header);
	// Pending are neither yet. Applied is 0 where no inbox answers.
	Applied     int    `json:"applied"`
	FailedAgain int    `json:"failed_again"`
	Pending     int    `json:"pending"`
	Verdict     string `json:"verdict"`
	// Why says what the verdict rests on, in a sentence.
	Why string `json:"why,omitempty"`
}

// Name is the stage as the operator reads it.
func (v StageVerdict) Name() string {
	if v.Stage == 0 {
		return "the canary"
	}
	return fmt.Sprintf("stage %d", v.Stage)
}

// Line is the verdict in one line: "the canary (10): 0 failed again,
// 10 applied, 0 pending: passed".
func (v StageVerdict) Line() string {
	s := fmt.Sprintf("%s (%d): %d failed again, %d applied, %d pending: %s", v.Name(), v.Size, v.FailedAgain, v.Applied, v.Pending, v.Verdict)
	if v.Why != "" {
		s += " (" + v.Why + ")"
	}
	return s
}
