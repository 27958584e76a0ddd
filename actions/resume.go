package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// Twin names a message by what the audit log records of it: a DLQ message
// is the twin of a recorded copy when all four match, never by position.
type Twin struct {
	MessageID, LogicalID, BodySHA256 string
	// Death is DeathDigest of the letter: a source handed back after a
	// lost ack has the x-death it had, while a letter with the same IDs
	// and body that died elsewhere (the same event fanned out to two
	// queues sharing the DLQ) has another. Empty in records written
	// before it was recorded.
	Death string
	// Run is the x-warren-run the letter carries: "" for a message no
	// staged run published; a run's for its copy that died again, which
	// a broker keeping a client's x-death cannot tell from its source
	// otherwise.
	Run string
}

// TwinOf is d's name as the audit log records it.
func TwinOf(d domain.DeadLetter) Twin {
	return Twin{MessageID: d.MessageID, LogicalID: d.LogicalID, BodySHA256: audit.BodyDigest(d.Body), Death: DeathDigest(d), Run: runOf(d)}
}

// DeathDigest is 16 hex digits of a sha256 of d's x-death: each death's
// queue, reason, exchange, routing keys, count and time. The broker never
// changes them while the message waits in the DLQ, however often it is
// delivered again; "" when d has none.
func DeathDigest(d domain.DeadLetter) string {
	if len(d.Deaths) == 0 {
		return ""
	}
	b := make([]byte, 0, 128)
	for _, x := range d.Deaths {
		for _, f := range append([]string{x.Queue, x.Reason, x.Exchange}, x.RoutingKeys...) {
			b = strconv.AppendQuote(b, f)
		}
		b = strconv.AppendInt(append(b, ' '), x.Count, 10)
		b = strconv.AppendInt(append(b, ' '), x.Time.Unix(), 10)
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// withoutDeath is t as records written before the death was recorded
// name it.
func (t Twin) withoutDeath() Twin {
	t.Death = ""
	return t
}

// take counts one off m's entry for t, or, when there is none, off the
// entry of a record that did not name the death; false when neither is
// left.
func take(m map[Twin]int, t Twin) bool {
	for _, k := range []Twin{t, t.withoutDeath()} {
		if m[k] > 0 {
			m[k]--
			return true
		}
		if k.Death == "" {
			break
		}
	}
	return false
}

// A DLQ message read by a resume is, by its name (Twin), one of these.
const (
	notRecorded     = iota // the operation recorded no copy of it
	maybePublished         // a copy recorded publishing, never confirmed
	twinOfConfirmed        // the source of a confirmed copy, handed back
)

// match says what a DLQ message named t is to the interrupted operation,
// and counts it off. Messages of one name are alike, but not always one
// message: a producer's two events of the same body and no message ID,
// dead-lettered in the same second, have one name. A source whose copy
// was recorded publishing and never confirmed was never acked, so it is
// certainly still in the DLQ: the first messages of a name stand for
// those, and only the ones after them are twins of confirmed copies.
// Taking twins first would remove a message of that name that was never
// moved, in place of a confirmed source whose ack took effect.
func (r *Resumption) match(t Twin) int {
	switch {
	case take(r.Published, t):
		return maybePublished
	case take(r.Confirmed, t):
		return twinOfConfirmed
	}
	return notRecorded
}

// Resumption is what the audit log says of an operation that has an
// intent and no final record: what it asked for, which copies were
// confirmed (their sources may still be in the DLQ: twins) and which were
// about to be published without a recorded confirm (possible duplicates).
type Resumption struct {
	Op      audit.Op
	Request Request
	Started string // time of the intent, for the prompt
	// Confirmed counts the recorded confirms per twin, Published the
	// messages recorded as publishing and never confirmed.
	Confirmed map[Twin]int
	Published map[Twin]int
	// Read is how many messages a preview of the resume read, 0 without
	// one: the run covers at least that many, since the queue may still
	// be taking back what the preview returned.
	Read int
	// Halted is the reason the operation's last run halted itself; ""
	// when it was interrupted instead. Its copies that died again are
	// replayed by the resume.
	Halted string
	// Staged holds the staging the operation was planned with:
	// canary size, its wait, the halt share and the pace.
	Staged map[string]string
	// File is an import's file, as its intent names it.
	File string
}

// ErrNothingToResume means the audit log has no incomplete operation that
// matches.
var ErrNothingToResume = errors.New("nothing to resume")

// ReadResumption finds the operation to finish among records: the one
// named id, or, when id is empty, the latest incomplete walk
// on vhost/queue. An operation that is unknown, finished, on another
// queue or not streamed is a *RequestError.
func ReadResumption(records []audit.Record, vhost, queue, id string) (*Resumption, error) {
	if id == "" {
		for _, s := range audit.Summaries(records) {
			// An import names the queue its file was exported from, and
			// is finished from its file: never by walking a queue.
			if s.Incomplete() && s.Vhost == vhost && s.Queue == queue && s.Action != ActionImport {
				id = s.Operation
			}
		}
		if id == "" {
			return nil, &RequestError{fmt.Errorf("%w: no incomplete operation on %s in vhost %s", ErrNothingToResume, queue, vhost)}
		}
	}
	r := &Resumption{Confirmed: map[Twin]int{}, Published: map[Twin]int{}}
	var intent, final *audit.Record
	for i := range records {
		rec := records[i]
		if rec.Operation != id {
			continue
		}
		switch rec.Outcome {
		case domain.OutcomeIntent:
			intent = &records[i]
		case domain.OutcomeFinal:
			final = &records[i]
		case domain.OutcomeConfirmed:
			for _, t := range twins(rec) {
				r.Confirmed[t]++
			}
		case domain.OutcomePublishing:
			for _, t := range twins(rec) {
				r.Published[t]++
			}
		case domain.OutcomeNotSent, domain.OutcomeReturned, domain.OutcomeNacked:
			// Recorded as publishing, and certainly not in the
			// destination: a halt or a stop kept them back, or the broker
			// routed them nowhere or refused them.
			for _, t := range twins(rec) {
				take(r.Published, t)
			}
		case domain.OutcomeHalted:
			r.Halted = rec.Detail["reason"]
		case domain.OutcomeResumed:
			r.Halted = ""
		}
	}
	switch {
	case intent == nil && final != nil:
		// An operation of one record (an export) moved nothing.
		return nil, &RequestError{fmt.Errorf("operation %s (%s, %s) moved no message: %w", id, final.Action, final.Time.UTC().Format("2006-01-02T15:04:05Z"), ErrNothingToResume)}
	case intent == nil:
		return nil, &RequestError{fmt.Errorf("no operation %s in the audit log", id)}
	case intent.Vhost != vhost || intent.Queue != queue:
		return nil, &RequestError{fmt.Errorf("operation %s was on %s in vhost %s, not %s", id, intent.Queue, intent.Vhost, queue)}
	case final != nil:
		return nil, &RequestError{fmt.Errorf("operation %s finished at %s: %w", id, final.Time.UTC().Format("2006-01-02T15:04:05Z"), ErrNothingToResume)}
	case intent.Detail["streamed"] != "true":
		return nil, &RequestError{fmt.Errorf("operation %s acted on a held page (a stream's offsets): there is nothing to resume; see `warren audit tail`", id)}
	}
	// A confirm was recorded after its publishing record: what is left
	// in Published had no confirm.
	for t, n := range r.Confirmed {
		if r.Published[t] <= n {
			delete(r.Published, t)
		} else {
			r.Published[t] -= n
		}
	}
	// Twins an earlier sweep or resume recorded as deduplicated stay
	// counted: the record is written before the ack, and an operation
	// left open after it may have lost that ack, leaving the twin in the
	// DLQ. A twin that is gone matches nothing, since only a source
	// handed back has the IDs, body and x-death of a confirmed copy.
	req, err := requestOf(*intent)
	if err != nil {
		return nil, err
	}
	r.Request = req
	r.Staged = map[string]string{}
	for _, k := range []string{"canary", "canary_wait", "halt_at", "pace"} {
		if v := intent.Detail[k]; v != "" {
			r.Staged[k] = v
		}
	}
	r.Started = intent.Time.UTC().Format("2006-01-02T15:04:05Z")
	r.File = intent.Detail["file"]
	r.Op = audit.Op{ID: id, Action: intent.Action, Context: intent.Context, Vhost: intent.Vhost, Queue: intent.Queue, Target: intent.Target}
	return r, nil
}

// requestOf rebuilds the rule an intent record states.
func requestOf(intent audit.Record) (Request, error) {
	d := intent.Detail
	req := Request{
		Action: intent.Action, Vhost: intent.Vhost, Queue: intent.Queue,
		FilterText: d["filter"], Parking: d["parking_queue"], Reason: d["reason"],
		Release: d["release"] == "true", IncludeApplied: d["include_applied"] == "true",
	}
	if d["rate"] != "" {
		rate, err := strconv.ParseFloat(d["rate"], 64)
		if err != nil {
			return Request{}, fmt.Errorf("intent of %s: rate %q: %w", intent.Operation, d["rate"], err)
		}
		req.Rate = rate
	}
	if req.FilterText != "" {
		f, err := domain.CompileFilter(req.FilterText)
		if err != nil {
			return Request{}, fmt.Errorf("intent of %s: filter: %w", intent.Operation, err)
		}
		req.Filter = f
	}
	if to := d["to"]; to != "" {
		o, err := ParseOverride(to)
		if err != nil {
			return Request{}, fmt.Errorf("intent of %s: destination %q: %w", intent.Operation, to, err)
		}
		req.To = &o
	}
	return req, req.Validate()
}

// twins are the messages a record names, by the parallel lists of its
// IDs and body digests.
func twins(rec audit.Record) []Twin {
	var digests, deaths, runs []string
	_ = json.Unmarshal([]byte(rec.Detail["body_sha256"]), &digests)
	_ = json.Unmarshal([]byte(rec.Detail["x_death_sha256"]), &deaths)
	_ = json.Unmarshal([]byte(rec.Detail["source_runs"]), &runs)
	out := make([]Twin, 0, len(rec.MessageIDs))
	for i, mid := range rec.MessageIDs {
		t := Twin{MessageID: mid}
		if i < len(rec.LogicalIDs) {
			t.LogicalID = rec.LogicalIDs[i]
		}
		if i < len(digests) {
			t.BodySHA256 = digests[i]
		}
		if i < len(deaths) {
			t.Death = deaths[i]
		}
		if i < len(runs) {
			t.Run = runs[i]
		}
		out = append(out, t)
	}
	return out
}
