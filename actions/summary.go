package actions

import (
	"fmt"
	"strings"

	"github.com/warrenops/warren/sources/dlq"
)

// maxGroupsInSummary keeps the prompt one readable sentence.
const maxGroupsInSummary = 3

// Summary is the plan as the one question a prompt asks, e.g. "Replay 37
// messages (12.0 KiB) from orders.dlq to queue orders (default exchange)? 5
// already applied will be skipped". Names in it come from the broker:
// sanitise before display.
func (p *Plan) Summary() string {
	notes := p.Notes()
	if p.Selected() == 0 {
		s := fmt.Sprintf("Nothing to %s from %s", p.verb(), p.Queue)
		if len(notes) > 0 {
			s += ": " + strings.Join(notes, "; ")
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s) from %s to ", capitalise(p.verb()), plural(p.Selected(), "message"), dlq.Size(p.Bytes), p.Queue)
	b.WriteString(p.destinationText())
	if p.Action == ActionQuarantine {
		fmt.Fprintf(&b, " with reason %q", p.Reason)
	}
	b.WriteString("?")
	if len(notes) > 0 {
		b.WriteString(" " + strings.Join(notes, "; "))
	}
	return b.String()
}

// Notes are the plan's caveats: what is skipped and why, the rate limit.
func (p *Plan) Notes() []string {
	var notes []string
	if n := len(p.SkippedApplied); n > 0 {
		notes = append(notes, fmt.Sprintf("%d already applied will be skipped", n))
	}
	if p.SkippedQuarantined > 0 {
		notes = append(notes, fmt.Sprintf("%d quarantined left out (replay from the parking queue to release them)", p.SkippedQuarantined))
	}
	if p.FilterErrors > 0 {
		notes = append(notes, fmt.Sprintf("%d the filter could not judge stay (%v)", p.FilterErrors, p.FilterError))
	}
	if p.NoDestination > 0 {
		notes = append(notes, fmt.Sprintf("%d without an origin queue stay (use --to)", p.NoDestination))
	}
	if p.InboxUnknown && p.Action == ActionReplay && p.Selected() > 0 {
		notes = append(notes, "inbox unknown: applied messages cannot be skipped")
	}
	if p.Rate > 0 {
		notes = append(notes, fmt.Sprintf("at most %g/s", p.Rate))
	}
	return notes
}

// Lines break the plan down for a dry run: one line per destination.
func (p *Plan) Lines() []string {
	lines := make([]string, 0, len(p.Groups))
	for _, g := range p.Groups {
		lines = append(lines, fmt.Sprintf("%s → %s (%s)", plural(g.Count, "message"), g.Dest, dlq.Size(g.Bytes)))
	}
	return lines
}

func (p *Plan) verb() string {
	switch {
	case p.Action == ActionQuarantine:
		return "quarantine"
	case p.Release:
		return "release"
	}
	return "replay"
}

func (p *Plan) destinationText() string {
	if len(p.Groups) == 1 {
		return p.Groups[0].Dest.String()
	}
	parts := make([]string, 0, maxGroupsInSummary+1)
	for i, g := range p.Groups {
		if i == maxGroupsInSummary {
			parts = append(parts, fmt.Sprintf("and %d more", len(p.Groups)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d", g.Dest, g.Count))
	}
	return fmt.Sprintf("%d destinations (%s)", len(p.Groups), strings.Join(parts, ", "))
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
