package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// Record is one entry of the audit chain. Field names and JSON keys are part
// of the command-line contract (audit export --format jsonl).
type Record struct {
	Seq        int64             `json:"seq"`
	Time       time.Time         `json:"time"`
	Operator   string            `json:"operator"`
	Host       string            `json:"host"`
	Context    string            `json:"context"`
	Action     string            `json:"action"`
	Operation  string            `json:"operation"`
	Vhost      string            `json:"vhost"`
	Queue      string            `json:"queue"`
	Target     string            `json:"target"`
	MessageIDs []string          `json:"message_ids"`
	LogicalIDs []string          `json:"logical_ids"`
	Outcome    string            `json:"outcome"`
	Detail     map[string]string `json:"detail"`
	PrevHash   string            `json:"prev_hash"`
	Hash       string            `json:"hash"`
}

// canonicalRecord fixes the field order of the hashed form. Keep it in step
// with Record: every field except Hash, in the same order.
type canonicalRecord struct {
	Seq        int64             `json:"seq"`
	Time       string            `json:"time"`
	Operator   string            `json:"operator"`
	Host       string            `json:"host"`
	Context    string            `json:"context"`
	Action     string            `json:"action"`
	Operation  string            `json:"operation"`
	Vhost      string            `json:"vhost"`
	Queue      string            `json:"queue"`
	Target     string            `json:"target"`
	MessageIDs []string          `json:"message_ids"`
	LogicalIDs []string          `json:"logical_ids"`
	Outcome    string            `json:"outcome"`
	Detail     map[string]string `json:"detail"`
	PrevHash   string            `json:"prev_hash"`
}

// Canonical returns the bytes that Hash covers (see the package
// documentation for the exact rules).
func (r Record) Canonical() []byte {
	return r.normalized().canonical()
}

// canonical is Canonical of a record already normalized.
func (n Record) canonical() []byte {
	b, err := encodeJSON(canonicalRecord{
		Seq:        n.Seq,
		Time:       n.Time.Format(time.RFC3339Nano),
		Operator:   n.Operator,
		Host:       n.Host,
		Context:    n.Context,
		Action:     n.Action,
		Operation:  n.Operation,
		Vhost:      n.Vhost,
		Queue:      n.Queue,
		Target:     n.Target,
		MessageIDs: n.MessageIDs,
		LogicalIDs: n.LogicalIDs,
		Outcome:    n.Outcome,
		Detail:     n.Detail,
		PrevHash:   n.PrevHash,
	})
	if err != nil {
		// Strings, slices of strings and a string map always encode.
		panic(fmt.Sprintf("audit: canonical encoding: %v", err))
	}
	return b
}

// ComputeHash returns hex(sha256(prev_hash ‖ canonical JSON)) for r. It
// ignores r.Hash, so comparing the result with r.Hash proves the record
// unchanged.
func (r Record) ComputeHash() string {
	return hashOf(r.PrevHash, r.normalized())
}

// hashOf is hex(sha256(prev ‖ canonical JSON of n)) for a record n
// already normalized: seal normalizes a record once, for its hash and
// its stored line alike.
func hashOf(prev string, n Record) string {
	return hashCanonical(prev, n.canonical())
}

// hashCanonical is hex(sha256(prev ‖ canonical)).
func hashCanonical(prev string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// normalized gives a record one representation per meaning: UTC time at
// microsecond precision (what PostgreSQL keeps), valid UTF-8 (invalid bytes
// become U+FFFD, which is what JSON can carry), and empty rather than nil
// lists and map, so a record reads back from every backend exactly as it
// was hashed. It copies the lists and map, never changing the caller's.
func (r Record) normalized() Record {
	r.Time = r.Time.UTC().Truncate(time.Microsecond)
	for _, s := range []*string{&r.Operator, &r.Host, &r.Context, &r.Action, &r.Operation,
		&r.Vhost, &r.Queue, &r.Target, &r.Outcome, &r.PrevHash, &r.Hash} {
		*s = validUTF8(*s)
	}
	r.MessageIDs = validList(r.MessageIDs)
	r.LogicalIDs = validList(r.LogicalIDs)
	d := make(map[string]string, len(r.Detail))
	for k, v := range r.Detail {
		d[validUTF8(k)] = validUTF8(v)
	}
	r.Detail = d
	return r
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func validList(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = validUTF8(s)
	}
	return out
}

// seal turns a caller's record into the next link after prev (nil for the
// first record): it assigns seq, prev_hash and hash, and the time when the
// caller left it zero.
func seal(r Record, prev *Record, now time.Time) Record {
	r = linked(r, prev, now)
	r.Hash = hashOf(r.PrevHash, r)
	return r
}

// linked is r normalized, with its time (now when the caller left it
// zero), seq and prev_hash as the next link after prev; no hash yet.
func linked(r Record, prev *Record, now time.Time) Record {
	if r.Time.IsZero() {
		r.Time = now
	}
	r.Seq, r.PrevHash = 1, ""
	if prev != nil {
		r.Seq, r.PrevHash = prev.Seq+1, prev.Hash
	}
	return r.normalized()
}

// sealLine is seal's record and its stored line (marshalLine), made
// from the canonical form the hash covers: the line is that form with
// the hash added as its last member, so a record is encoded once, not
// twice (a replay's or an import's records name every message).
func sealLine(r Record, prev *Record, now time.Time) (Record, []byte, error) {
	r = linked(r, prev, now)
	c := r.canonical()
	r.Hash = hashCanonical(r.PrevHash, c)
	if y := r.Time.Year(); y < 0 || y > 9999 {
		// time.Time's JSON refuses such a year; the canonical form does not.
		line, err := marshalLine(r)
		return r, line, err
	}
	line := make([]byte, 0, len(c)+len(`,"hash":""`)+len(r.Hash))
	line = append(line, c[:len(c)-1]...)
	line = append(append(append(line, `,"hash":"`...), r.Hash...), `"}`...)
	return r, line, nil
}

// validate rejects a record that would say nothing about what happened.
func validate(r Record) error {
	if strings.TrimSpace(r.Action) == "" || strings.TrimSpace(r.Outcome) == "" {
		return fmt.Errorf("audit: a record needs an action and an outcome")
	}
	return nil
}

// validateAll rejects a group with any record validate rejects: a group
// is stored whole or not at all.
func validateAll(recs []Record) error {
	for _, r := range recs {
		if err := validate(r); err != nil {
			return err
		}
	}
	return nil
}

// marshalLine is the stored form of a record: one JSON object, no newline.
func marshalLine(r Record) ([]byte, error) {
	return encodeJSON(r)
}

// parseLine decodes a stored record strictly: an unknown key, a key
// given twice or a key in another case is an alteration too, since the
// hash covers the record the decoder makes while grep and jq read the
// line ("outcome":"nacked","Outcome":"confirmed" would decode as
// confirmed). Trailing data is refused as well.
func parseLine(b []byte) (Record, error) {
	var r Record
	if err := jsonv2.Unmarshal(b, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
		return Record{}, err
	}
	return r, nil
}

func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// BodyDigest identifies a message body without storing it: "sha256:<hex>".
// Records carry it with the body's size (detail keys body_sha256 and
// body_size), never the body itself.
func BodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}
