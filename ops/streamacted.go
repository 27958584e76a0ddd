package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
)

// streamActed is, for each offset of the stream ref whose copy an
// earlier operation had confirmed (a replay, a quarantine), that
// operation's ID. A stream keeps what is moved out of it: without this,
// every replay of it would publish the same messages again
// (docs/ARCHITECTURE.md §4.4). When the audit log cannot be read, the
// note says so and nothing is known.
func (o *Ops) streamActed(ctx context.Context, ref domain.QueueRef) (map[int64]string, string) {
	acted := map[int64]string{}
	var bad error
	err := o.Audit().each(ctx, func(r audit.Record) {
		if r.Outcome != domain.OutcomeConfirmed || r.Vhost != ref.Vhost || r.Queue != ref.Name || r.Detail["offsets"] == "" {
			return
		}
		var offsets []string
		if err := json.Unmarshal([]byte(r.Detail["offsets"]), &offsets); err != nil {
			bad = fmt.Errorf("record %d: offsets: %w", r.Seq, err)
			return
		}
		for _, s := range offsets {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				acted[n] = r.Operation
			}
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return map[int64]string{}, fmt.Sprintf("the audit log could not be read for what earlier operations moved out of this stream (%v): messages they replayed or quarantined are planned again", err)
	}
	return acted, ""
}

// actedNote says which of the messages read an earlier operation moved,
// and that they are left out.
func actedNote(acted map[int64]string, skipped []domain.DeadLetter) string {
	ops := map[string]bool{}
	for _, d := range skipped {
		ops[acted[d.Offset]] = true
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return fmt.Sprintf("%s read %s replayed or quarantined before (%s): a stream keeps what is moved out of it, so they are left out",
		format.Messages(len(skipped)), wasWere(len(skipped)), strings.Join(names, ", "))
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
