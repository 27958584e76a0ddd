package actions

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/domain"
)

// maxGroupsInSummary keeps the prompt one readable sentence.
const maxGroupsInSummary = 3

// question is what the question about an operation states; a plan and a
// preview both give one.
type question struct {
	action, queue, reason string
	release               bool
	moving                int
	// logicalIDs is how many distinct logical IDs the moving messages
	// carry; 0 when they were not counted.
	logicalIDs         int
	bytes              int64
	groups             []Group
	skippedApplied     int
	skippedQuarantined int
	filterErrors       int
	filterError        error
	noDestination      int
	filtered           int  // a preview's: how many the filter left out
	keepKey            bool // --to EXCHANGE: noDestination lack an original routing key
	unconfirmed        int
	inboxUnknown       bool
	rate               float64
	// Walks only: how many messages were read, and how
	// many of the moving ones came back after an earlier replay.
	read, loops int
}

func (p *Plan) question() question {
	return question{action: p.Action, queue: p.Queue, reason: p.Reason, release: p.Release, moving: p.Selected(),
		logicalIDs: p.LogicalIDs, bytes: p.Bytes, groups: p.Groups, skippedApplied: len(p.SkippedApplied), skippedQuarantined: p.SkippedQuarantined,
		filterErrors: p.FilterErrors, filterError: p.FilterError, noDestination: p.NoDestination,
		keepKey: p.KeepKey, unconfirmed: p.Unconfirmed, inboxUnknown: p.InboxUnknown, rate: p.Rate}
}

func (p *Preview) question() question {
	r := p.Request
	return question{action: r.Action, queue: r.Queue, reason: r.Reason, release: r.Release, moving: p.Moving,
		logicalIDs: p.LogicalIDs, bytes: p.Bytes, groups: p.Groups, skippedApplied: p.SkippedApplied, skippedQuarantined: p.SkippedQuarantined,
		filterErrors: p.FilterErrors, filterError: p.FilterError, noDestination: p.NoDestination, filtered: p.Filtered,
		keepKey: r.To != nil && r.To.KeepKey, unconfirmed: p.Unconfirmed, inboxUnknown: p.InboxUnknown, rate: r.Rate, read: p.Read, loops: p.ReplayLoops}
}

// Summary is the plan as the one question a prompt asks, e.g. "Replay 37
// messages (12.0 KiB) from orders.dlq to queue orders (default exchange)? 5
// already applied will be skipped". Names in it come from the broker:
// sanitise before display.
func (p *Plan) Summary() string { return p.question().summary() }

// Notes are the plan's caveats: what is skipped and why, the rate limit.
func (p *Plan) Notes() []string { return p.question().notes() }

// Lines break the plan down for a dry run: one line per destination.
func (p *Plan) Lines() []string { return p.question().lines() }

// Summary is the preview as the prompt's question; it names how many
// messages were read, so the operator sees the N the operation takes.
func (p *Preview) Summary() string { return p.question().summary() }

// Notes are the preview's caveats: what stays and why, the rate limit.
func (p *Preview) Notes() []string { return p.question().notes() }

// Lines break the preview down: one line per destination.
func (p *Preview) Lines() []string { return p.question().lines() }

func (t question) summary() string {
	notes := t.notes()
	if t.moving == 0 {
		if t.filtered > 0 && t.filtered == t.read {
			notes = append(notes, "the filter chose none of them")
		}
		s := fmt.Sprintf("Nothing to %s from %s", t.verb(), t.queue)
		if len(notes) > 0 {
			s += ": " + strings.Join(notes, "; ")
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s) from %s to ", capitalise(t.verb()), MessagesAndIDs(t.moving, t.logicalIDs), domain.Size(t.bytes), t.queue)
	b.WriteString(t.destinationText())
	if t.action == ActionQuarantine {
		fmt.Fprintf(&b, " with reason %q", t.reason)
	}
	b.WriteString("?")
	if len(notes) > 0 {
		b.WriteString(" " + strings.Join(notes, "; "))
	}
	return b.String()
}

func (t question) notes() []string {
	var notes []string
	if t.read > 0 {
		notes = append(notes, fmt.Sprintf("read %s of the queue", plural(t.read, "message")))
	}
	if n := t.skippedApplied; n > 0 {
		notes = append(notes, fmt.Sprintf("%d already applied will be skipped", n))
	}
	notes = append(notes, t.stays()...)
	if t.loops > 0 {
		notes = append(notes, fmt.Sprintf("%d came back after an earlier replay: replaying them again without a fix only loops", t.loops))
	}
	if t.inboxUnknown && t.action == ActionReplay && t.moving > 0 {
		notes = append(notes, "inbox unknown: applied messages cannot be skipped")
	}
	if t.rate > 0 {
		notes = append(notes, fmt.Sprintf("at most %g/s", t.rate))
	}
	return notes
}

// stays says why letters that are neither moving nor applied stay.
func (t question) stays() []string {
	var notes []string
	if t.skippedQuarantined > 0 {
		notes = append(notes, fmt.Sprintf("%d quarantined left out (replay from the parking queue to release them)", t.skippedQuarantined))
	}
	if t.filterErrors > 0 {
		notes = append(notes, fmt.Sprintf("%d the filter could not judge stay (%v)", t.filterErrors, t.filterError))
	}
	switch {
	case t.noDestination > 0 && t.keepKey:
		notes = append(notes, fmt.Sprintf("%d without an original routing key stay (no x-death or framework header names one; give the key: --to EXCHANGE/KEY)", t.noDestination))
	case t.noDestination > 0:
		notes = append(notes, fmt.Sprintf("%d without an origin queue stay (use --to)", t.noDestination))
	}
	if t.unconfirmed > 0 {
		notes = append(notes, fmt.Sprintf("%d stay: destination not confirmed (their headers name an origin that does not pair with %s; use --to)", t.unconfirmed, t.queue))
	}
	return notes
}

// StayNotes say why a walk that asked no one left the letters it read
// and did not move in the queue: what a plan's question would have said
// before it. Nil when nothing stayed for a reason.
func (r *Result) StayNotes() []string {
	k := r.kept
	t := question{action: k.Request.Action, queue: k.Request.Queue, skippedQuarantined: k.SkippedQuarantined,
		filterErrors: k.FilterErrors, filterError: k.FilterError, noDestination: k.NoDestination,
		keepKey: k.Request.To != nil && k.Request.To.KeepKey, unconfirmed: k.Unconfirmed}
	notes := t.stays()
	if k.Filtered > 0 {
		notes = append([]string{fmt.Sprintf("%d not matching the filter stay", k.Filtered)}, notes...)
	}
	if r.diedAgain > 0 {
		copies := "1 copy"
		if r.diedAgain > 1 {
			copies = fmt.Sprintf("%d copies", r.diedAgain)
		}
		notes = append(notes, copies+" of this run died again and stay (a run replays a message once)")
	}
	return notes
}

func (t question) lines() []string {
	lines := make([]string, 0, len(t.groups))
	for _, g := range t.groups {
		lines = append(lines, fmt.Sprintf("%s → %s (%s)", plural(g.Count, "message"), g.Dest, domain.Size(g.Bytes)))
	}
	return lines
}

func (t question) verb() string {
	switch {
	case t.action == ActionQuarantine:
		return "quarantine"
	case t.release:
		return "release"
	}
	return "replay"
}

func (t question) destinationText() string {
	if len(t.groups) == 1 {
		return t.groups[0].Dest.String()
	}
	parts := make([]string, 0, maxGroupsInSummary+1)
	for i, g := range t.groups {
		if i == maxGroupsInSummary {
			parts = append(parts, fmt.Sprintf("and %d more", len(t.groups)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d", g.Dest, g.Count))
	}
	return fmt.Sprintf("%d destinations (%s)", len(t.groups), strings.Join(parts, ", "))
}

// MessagesAndIDs words how many messages an operation moves and, when
// some of them share a logical ID, how many logical IDs they carry: "25
// messages, 24 logical IDs: 1 duplicated". When every ID is distinct (or
// they were not counted, ids 0) it is "25 messages": the count alone says
// it. Both front ends word it through Summary.
func MessagesAndIDs(n, ids int) string {
	s := plural(n, "message")
	if ids > 0 && ids < n {
		s += fmt.Sprintf(", %s: %d duplicated", plural(ids, "logical ID"), n-ids)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
