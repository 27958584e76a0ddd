package mgmt

import (
	"bytes"
	"encoding/json"
)

// present is a list read from the management API that leaves out the
// items which vanished while the broker built it. The broker lists the
// vhosts, then reads each one's record: a vhost deleted between the two
// comes as an empty list, [], where an object was due. One deletion
// elsewhere on the broker must not fail the whole read.
type present[T any] []T

func (p *present[T]) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make([]T, 0, len(raw))
	for _, r := range raw {
		if vanished(r) {
			continue
		}
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			return err
		}
		out = append(out, v)
	}
	*p = out
	return nil
}

// vanished reports whether an item is the empty list the broker sends for
// a record it no longer has.
func vanished(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return false
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}
