package domain

// Counts are an operation's figures. The JSON fields are the
// command-line contract of `dlq replay|quarantine --json`.
type Counts struct {
	Operation      string `json:"operation"`
	Selected       int    `json:"selected"`
	SkippedApplied int    `json:"skipped_applied"`
	Confirmed      int    `json:"confirmed"`
	Returned       int    `json:"returned"`
	Nacked         int    `json:"nacked"`
	Unknown        int    `json:"unknown"`
	// NotSent were never published: certainly still in the DLQ.
	NotSent int `json:"-"`
	// Cancelled is set when the operator stopped the operation before
	// every message was sent.
	Cancelled bool `json:"-"`
	// A walk also counts what it took from the queue, what
	// it kept there (filtered, quarantined, without a destination, past
	// a stop) and how many sources it removed.
	Taken int `json:"-"`
	Kept  int `json:"-"`
	Moved int `json:"-"`
	// A resume also counts the DLQ twins of recorded confirms it removed,
	// and the copies it published again that were published before
	// without a recorded confirm: they may exist twice.
	Deduplicated       int `json:"-"`
	PossibleDuplicates int `json:"-"`
	// A staged replay's verdicts: Stages from the canary (stage 0) on,
	// Canary the first of them; Halted, with the reason, when the run
	// stopped itself and left the operation for `dlq resume`.
	Canary     *StageVerdict  `json:"canary,omitempty"`
	Stages     []StageVerdict `json:"stages,omitempty"`
	Halted     bool           `json:"halted"`
	HaltReason string         `json:"halt_reason,omitempty"`
	// Incomplete is set when the run left its operation open without a
	// halt: an import that did not publish its whole file, finished by
	// running it again.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Left is how many messages the operation did not move: they stay in
// the DLQ.
func (c Counts) Left() int { return c.Returned + c.Nacked + c.Unknown + c.NotSent }
