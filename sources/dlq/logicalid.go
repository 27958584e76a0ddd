package dlq

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// maxLogicalID bounds an ID taken from a header or body: an ID is a key,
// not a payload, and a hostile message must not make it one.
const maxLogicalID = 512

// LogicalID takes the logical ID from spec ("", message_id, header:NAME
// or json:PATH), falling back to the message_id property and then to a
// content hash "sha256:<first 16 hex digits>" marked IDHash. A source
// whose value is missing, empty, not scalar or too long falls back.
func LogicalID(spec string, messageID string, h amqp.Table, body []byte) (string, domain.IDSource) {
	switch {
	case strings.HasPrefix(spec, "header:"):
		if s, ok := domain.ValueScalarText(h[strings.TrimPrefix(spec, "header:")]); ok && usableID(s) {
			return s, domain.IDHeader
		}
	case strings.HasPrefix(spec, "json:"):
		if s, ok := jsonPath(body, strings.TrimPrefix(spec, "json:")); ok && usableID(s) {
			return s, domain.IDJSON
		}
	}
	if usableID(messageID) {
		return messageID, domain.IDMessageID
	}
	return HashID(body), domain.IDHash
}

// HashID is the content-hash fallback for a message without an ID.
func HashID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

func usableID(s string) bool { return s != "" && len(s) <= maxLogicalID }

// jsonPath reads one scalar out of a JSON body without decoding the rest:
// the path is dot-separated keys and array indexes, as in "event.id",
// "items.0.sku" or "$.items[0].sku". Strings give their value, numbers
// their literal text, booleans true or false; null, objects and arrays
// give nothing.
func jsonPath(body []byte, path string) (string, bool) {
	steps, ok := splitPath(path)
	if !ok {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for _, step := range steps {
		if !descend(dec, step) {
			return "", false
		}
	}
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch v := tok.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

func splitPath(path string) ([]string, bool) {
	path = strings.TrimPrefix(path, "$")
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	path = strings.TrimPrefix(path, ".")
	if path == "" {
		return nil, false
	}
	steps := strings.Split(path, ".")
	for _, s := range steps {
		if s == "" {
			return nil, false
		}
	}
	return steps, true
}

// descend moves the decoder to the value of key (in an object) or of the
// index step (in an array), skipping everything before it.
func descend(dec *json.Decoder, step string) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return false
	}
	switch delim {
	case '{':
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false
			}
			if k == step {
				return true
			}
			if skipValue(dec) != nil {
				return false
			}
		}
	case '[':
		idx, err := strconv.Atoi(step)
		if err != nil || idx < 0 {
			return false
		}
		for i := 0; dec.More(); i++ {
			if i == idx {
				return true
			}
			if skipValue(dec) != nil {
				return false
			}
		}
	}
	return false
}

var errNotValue = errors.New("not a JSON value")

// skipValue consumes one whole value, however nested.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return errNotValue
		}
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth <= 0 {
			if depth < 0 {
				return errNotValue
			}
			return nil
		}
	}
}
