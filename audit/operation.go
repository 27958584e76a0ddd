package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/warrenops/warren/domain"
)

// NewOperationID returns a fresh operation ID that sorts by start time,
// e.g. "20240501T031502Z-9f86d081".
func NewOperationID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // documented never to return an error
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Op stamps the records of one operation with the same header fields, so
// every record of the operation carries who, where and what.
type Op struct {
	ID       string // operation ID; NewOperationID makes one
	Action   string // replay, quarantine, …
	Operator string
	Host     string
	Context  string
	Vhost    string
	Queue    string // the queue the messages are taken from
	Target   string // where they go, e.g. "exchange/routing key" or a queue
}

// Plan is what an intent record promises, before anything moves.
type Plan struct {
	Selected       int
	Destinations   []string
	Bytes          int64
	SkippedApplied int
	Extra          map[string]string // more detail, e.g. filter or rate
}

func (o Op) record(outcome string, detail map[string]string) Record {
	return Record{
		Operator: o.Operator, Host: o.Host, Context: o.Context,
		Action: o.Action, Operation: o.ID,
		Vhost: o.Vhost, Queue: o.Queue, Target: o.Target,
		Outcome: outcome, Detail: detail,
	}
}

// Intent is the write-ahead record: detail holds selected, destinations
// (a JSON array), bytes and skipped_applied, plus p.Extra.
func (o Op) Intent(p Plan) Record {
	d := make(map[string]string, len(p.Extra)+4)
	for k, v := range p.Extra {
		d[k] = v
	}
	dest := p.Destinations
	if dest == nil {
		dest = []string{}
	}
	d["selected"] = strconv.Itoa(p.Selected)
	d["destinations"] = jsonCell(dest)
	d["bytes"] = strconv.FormatInt(p.Bytes, 10)
	d["skipped_applied"] = strconv.Itoa(p.SkippedApplied)
	return o.record(domain.OutcomeIntent, d)
}

// Outcome records what happened to one batch of messages; messageIDs and
// logicalIDs are parallel where both are known. detail may be nil.
func (o Op) Outcome(outcome string, messageIDs, logicalIDs []string, detail map[string]string) Record {
	r := o.record(outcome, detail)
	r.MessageIDs, r.LogicalIDs = messageIDs, logicalIDs
	return r
}

// Final closes the operation; detail holds the message count per outcome.
func (o Op) Final(counts map[string]int) Record {
	d := make(map[string]string, len(counts))
	for k, n := range counts {
		d[k] = strconv.Itoa(n)
	}
	return o.record(domain.OutcomeFinal, d)
}

// Summaries groups records by operation ID, in order of each operation's
// first record. Records without an operation ID are left out. A message
// outcome record counts max(len(message_ids), len(logical_ids)) messages,
// or one when it lists neither.
func Summaries(records []Record) []domain.OperationSummary {
	var s Summarizer
	for _, r := range records {
		s.Add(r)
	}
	return s.Summaries()
}

// Summarizer makes Summaries of records given one at a time, as a scan
// reads them, so that what is held is a summary per operation, not the
// log.
type Summarizer struct {
	index map[string]int
	out   []domain.OperationSummary
	// streamed are the operations whose intent counted what a walk
	// would read, not what it would choose; resumed those a resume took
	// up, whose final counts the resume's run alone.
	streamed, resumed map[string]bool
	// intended are the operations whose intent was read: one whose
	// final comes without one moved nothing (an export).
	intended map[string]bool
}

// Add counts r in its operation's summary.
func (z *Summarizer) Add(r Record) {
	if r.Operation == "" {
		return
	}
	if z.index == nil {
		z.index = map[string]int{}
	}
	i, ok := z.index[r.Operation]
	if !ok {
		i = len(z.out)
		z.index[r.Operation] = i
		z.out = append(z.out, domain.OperationSummary{
			Operation: r.Operation, Action: r.Action, Vhost: r.Vhost,
			Queue: r.Queue, Target: r.Target, Operator: r.Operator,
			Started: r.Time, FirstSeq: r.Seq, Counts: map[string]int{},
		})
	}
	s := &z.out[i]
	s.LastSeq = r.Seq
	switch r.Outcome {
	case domain.OutcomeIntent:
		z.mark(&z.intended, r.Operation)
		s.Selected, _ = strconv.Atoi(r.Detail["selected"])
		if r.Detail["streamed"] == "true" {
			z.mark(&z.streamed, r.Operation)
		}
	case domain.OutcomeFinal:
		t := r.Time
		s.Finished = &t
		s.Cancelled = r.Detail["cancelled"] == "true"
		s.Failed = r.Detail["error"]
		if n, err := strconv.Atoi(r.Detail["selected"]); err == nil && z.streamed[r.Operation] && !z.resumed[r.Operation] {
			s.Selected = n
		}
		if !z.intended[r.Operation] {
			// An operation of one record, which moved nothing (an
			// export): its final says what it took.
			s.Selected, _ = strconv.Atoi(r.Detail["selected"])
			if n, err := strconv.Atoi(r.Detail[domain.OutcomeExported]); err == nil && n > 0 {
				s.Counts[domain.OutcomeExported] = n
			}
		}
	case domain.OutcomePublishing:
		// Write-ahead: the messages' outcome records count them.
	case domain.OutcomeResumed:
		// A resume taking the operation up: its outcome records
		// count the messages.
		s.Halted = ""
		z.mark(&z.resumed, r.Operation)
	case domain.OutcomeHalted:
		s.Halted = r.Detail["reason"]
	case domain.OutcomeStage:
		s.Stages = append(s.Stages, StageOf(r))
	default:
		s.Counts[r.Outcome] += max(len(r.MessageIDs), len(r.LogicalIDs), 1)
	}
}

func (z *Summarizer) mark(set *map[string]bool, op string) {
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[op] = true
}

// Summaries are the operations' summaries so far, in order of each
// operation's first record.
func (z *Summarizer) Summaries() []domain.OperationSummary { return z.out }

// StageOf reads a stage record's verdict.
func StageOf(r Record) domain.StageVerdict {
	n := func(k string) int {
		v, _ := strconv.Atoi(r.Detail[k])
		return v
	}
	return domain.StageVerdict{Stage: n("stage"), Size: n("size"), Applied: n("applied"), FailedAgain: n("failed_again"),
		Pending: n("pending"), Verdict: r.Detail["verdict"], Why: r.Detail["why"]}
}

// Destinations decodes the destinations of an intent record's detail.
func Destinations(detail map[string]string) []string {
	var d []string
	if err := json.Unmarshal([]byte(detail["destinations"]), &d); err != nil {
		return nil
	}
	return d
}
