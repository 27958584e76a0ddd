package format

import (
	"fmt"
	"strings"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/text/sanitize"
)

// Level is how urgent a queue's state is: the overview's row tone, and
// `status --check`'s exit code.
type Level int

// Levels, least urgent first.
const (
	Fine       Level = iota
	WorthALook       // ~ in the overview; status --check exits 1
	ActNow           // ! in the overview; status --check exits 2
)

// String is the level as a check prints it.
func (l Level) String() string {
	switch l {
	case ActNow:
		return "act now"
	case WorthALook:
		return "worth a look"
	}
	return "fine"
}

// Assess decides whether a queue is in trouble (act now) or worth a look,
// and says why. What a queue's movement means is judged over a window of
// snapshots (marks, from domain/trouble); a node alarm and what a
// queue holds are facts of this snapshot.
func Assess(q domain.Queue, marks []trouble.Mark, window time.Duration, alarm string) (Level, []string) {
	var act, warn []string
	if alarm != "" {
		act = append(act, alarm)
	}
	for _, m := range marks {
		var dlq string
		if q.DLQ != nil {
			dlq = q.DLQ.Name
		}
		act = append(act, Mark(m, dlq, window))
	}
	if held := DLXHeldNote(q); held != "" {
		warn = append(warn, held)
	}
	if q.DLQ != nil && q.DLQMessages > 0 {
		warn = append(warn, Plural(q.DLQMessages, "dead letter")+" in "+sanitize.Text(q.DLQ.Name))
	}
	if q.IsDLQ() && q.Messages > 0 {
		warn = append(warn, "holds "+Plural(q.Messages, "dead letter")+PairedBy(q))
	}
	if q.Parking && q.Messages > 0 {
		warn = append(warn, "parking queue: "+Plural(q.Messages, "quarantined message")+", out of replays until released")
	}
	switch {
	case len(act) > 0:
		return ActNow, append(act, warn...)
	case len(warn) > 0:
		return WorthALook, warn
	}
	return Fine, nil
}

// NodeAlarms maps a node to the alarm it raises, if any.
func NodeAlarms(nodes []domain.Node) map[string]string {
	alarms := map[string]string{}
	for _, n := range nodes {
		var what []string
		if !n.Running {
			what = append(what, "down")
		}
		if n.MemAlarm {
			what = append(what, "memory alarm")
		}
		if n.DiskAlarm {
			what = append(what, "disk alarm")
		}
		if len(what) > 0 {
			alarms[n.Name] = "node " + sanitize.Text(n.Name) + ": " + strings.Join(what, ", ")
		}
	}
	return alarms
}

// PairedBy says how an error queue was paired with the queues it serves
// when it was not by dead-lettering (docs/ARCHITECTURE.md §4.12). Its
// words are read on the dashboard, in the fleet and by status --check,
// so they name no key.
func PairedBy(q domain.Queue) string {
	switch {
	case len(q.DLQOf) == 0 && q.ErrorQueue:
		return " · an error queue by its name; its messages say which queues it serves"
	case len(q.DLQOf) == 0 || q.PairedBy == "" || q.PairedBy == domain.PairedByDLX:
		return ""
	case q.PairedBy == domain.PairedByLetter:
		return fmt.Sprintf(" · error queue of %s, as its messages say", served(q.DLQOf))
	}
	return fmt.Sprintf(" · error queue of %s (paired by %s)", served(q.DLQOf), q.PairedBy)
}

// served names the queues an error queue serves: all of up to three, else
// the first two and how many more.
func served(of []domain.QueueRef) string {
	names := make([]string, 0, 3)
	for i, r := range of {
		if i == 2 && len(of) > 3 {
			names = append(names, fmt.Sprintf("%d more", len(of)-2))
			break
		}
		names = append(names, sanitize.Text(r.Name))
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
