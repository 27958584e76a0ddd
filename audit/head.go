package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/warrenops/warren/domain"
)

// HeadOf is the head a chain has when r is its last record.
func HeadOf(r Record) domain.AuditHead { return domain.AuditHead{Seq: r.Seq, Hash: r.Hash} }

// HeadForm is the form ParseHead reads, for messages.
const HeadForm = "SEQ:HASH, e.g. 42:sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 (the sha256: prefix is optional)"

// ParseHead reads a head an operator kept: "SEQ:HASH", the hash as 64
// hex digits with or without "sha256:" before it.
func ParseHead(s string) (domain.AuditHead, error) {
	seqText, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return domain.AuditHead{}, fmt.Errorf("%q: want %s", s, HeadForm)
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil || seq < 1 {
		return domain.AuditHead{}, fmt.Errorf("%q: the seq %q is not a record number (1 or more); want %s", s, seqText, HeadForm)
	}
	hash = strings.ToLower(strings.TrimPrefix(hash, "sha256:"))
	if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return domain.AuditHead{}, fmt.Errorf("%q: the hash is not 64 hex digits; want %s", s, HeadForm)
	}
	return domain.AuditHead{Seq: seq, Hash: hash}, nil
}
