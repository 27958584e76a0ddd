package mgmt

import (
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/warrenops/warren/domain"
)

// lenient are the options for decoding what the broker sends with the
// JSON v2 engine: a string that is not valid UTF-8 is kept, with U+FFFD
// in place of the bad bytes, as encoding/json does, and a repeated key
// keeps its last value, instead of either failing a whole list.
var lenient = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// queueBlock is how many queues are collected before another block is
// started.
const queueBlock = 1024

// decodeQueues reads a JSON list of queues one element at a time and
// converts each at once, so the raw form of a large list is never held
// whole. The queues are gathered in blocks and copied once into a slice
// of the exact length: a slice grown one append at a time would allocate
// about five times its final size on the way (large slices grow by a
// quarter), which at 10 000 queues was most of a refresh's garbage.
func decodeQueues(r io.Reader, withStats bool) ([]domain.Queue, error) {
	dec := jsontext.NewDecoder(r, lenient)
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '[' {
		return nil, fmt.Errorf("want a list of queues, got a JSON %s", tok.Kind())
	}
	var blocks [][]domain.Queue
	cur := make([]domain.Queue, 0, queueBlock)
	var raw rawQueue // one for all, zeroed before each: v2 merges into a value
	for dec.PeekKind() != ']' {
		raw = rawQueue{}
		if err := jsonv2.UnmarshalDecode(dec, &raw, lenient); err != nil {
			return nil, err
		}
		if len(cur) == cap(cur) {
			blocks = append(blocks, cur)
			cur = make([]domain.Queue, 0, queueBlock)
		}
		cur = append(cur, raw.queue(withStats))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	out := make([]domain.Queue, 0, len(blocks)*queueBlock+len(cur))
	for _, b := range blocks {
		out = append(out, b...)
	}
	return append(out, cur...), nil
}
