package audit

import (
	"fmt"
	"strconv"
	"strings"
)

// Head is where a chain ends: its last record's seq and hash. The chain
// alone cannot show what is missing at its end: a log cut short, or
// rewritten and rehashed from its first record, is a valid chain too. An
// operator who keeps a head (in the ticket of an operation, beside a
// backup) can later prove the log still holds that record, unchanged,
// with VerifyOptions.ExpectHead.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"` // hex, as the record's hash field holds it
}

// HeadOf is the head a chain has when r is its last record.
func HeadOf(r Record) Head { return Head{Seq: r.Seq, Hash: r.Hash} }

// String is the head as warren prints it: "seq 42 sha256:9f86d081…".
func (h Head) String() string { return fmt.Sprintf("seq %d sha256:%s", h.Seq, h.Hash) }

// HeadForm is the form ParseHead reads, for messages.
const HeadForm = "SEQ:HASH, e.g. 42:sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 (the sha256: prefix is optional)"

// ParseHead reads a head an operator kept: "SEQ:HASH", the hash as 64
// hex digits with or without "sha256:" before it.
func ParseHead(s string) (Head, error) {
	seqText, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Head{}, fmt.Errorf("%q: want %s", s, HeadForm)
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil || seq < 1 {
		return Head{}, fmt.Errorf("%q: the seq %q is not a record number (1 or more); want %s", s, seqText, HeadForm)
	}
	hash = strings.ToLower(strings.TrimPrefix(hash, "sha256:"))
	if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return Head{}, fmt.Errorf("%q: the hash is not 64 hex digits; want %s", s, HeadForm)
	}
	return Head{Seq: seq, Hash: hash}, nil
}
