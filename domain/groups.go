package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// A failure group gathers the dead letters that failed the same way: the
// same convention, origin, error type (or broker reason) and error message
// once its variable parts are normalised (docs/ARCHITECTURE.md §4.12).

// Fingerprint is the key of a failure group.
type Fingerprint struct {
	Convention string
	Origin     string
	// Type is the error type, or the broker's reason when there is none.
	Type string
	// Message is the normalised error message.
	Message string
}

// FingerprintOf is the group key of a failure.
func FingerprintOf(f Failure) Fingerprint {
	t := f.ErrorType
	if t == "" {
		t = f.Kind
	}
	return Fingerprint{Convention: f.Convention, Origin: f.Origin(), Type: t, Message: Normalize(f.ErrorMessage)}
}

// ID is the group's short ID: the first 10 hex digits of the
// fingerprint's sha256, the same for the same fingerprint on every run
// and every machine.
func (k Fingerprint) ID() string {
	h := sha256.New()
	for _, s := range []string{k.Convention, k.Origin, k.Type, k.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

// Group counts the dead letters of one fingerprint.
type Group struct {
	ID string
	Fingerprint
	Kind string
	// OriginQueue is the origin queue the group's letters name, "" when
	// they name an exchange or nothing.
	OriginQueue string
	Count       int
	// Example is the first letter's error message as it was, cut.
	Example string
	// ExampleID is that letter's logical ID.
	ExampleID string
	// FirstFailed and LastFailed span the failure times known; zero when
	// none of the group's letters carries one.
	FirstFailed, LastFailed  time.Time
	MinAttempts, MaxAttempts int
	// BusinessIDs are the group's logical IDs an inbox can know, kept
	// only when the scan was asked to (Options.GroupIDs), for the
	// applied and pending counts.
	BusinessIDs []string
}

// Groups counts dead letters by fingerprint within the scan's bounds:
// past MaxStatKeys distinct groups, the rest count in one OtherKey group.
type Groups struct {
	byKey   map[Fingerprint]*Group
	keepIDs bool
}

// NewGroups returns an empty tally; keepIDs keeps each group's business
// IDs for inbox lookups.
func NewGroups(keepIDs bool) *Groups {
	return &Groups{byKey: map[Fingerprint]*Group{}, keepIDs: keepIDs}
}

// Add counts one letter's failure.
func (g *Groups) Add(f Failure, attempts int, logicalID, businessID string) string {
	return g.add(FingerprintOf(f), f, attempts, logicalID, businessID)
}

func (g *Groups) add(k Fingerprint, f Failure, attempts int, logicalID, businessID string) string {
	grp := g.byKey[k]
	if grp == nil {
		if len(g.byKey) >= MaxStatKeys {
			k = Fingerprint{Convention: OtherKey, Origin: OtherKey, Type: OtherKey, Message: "more groups than warren counts apart"}
			grp = g.byKey[k]
		}
		if grp == nil {
			grp = &Group{ID: k.ID(), Fingerprint: k, Kind: f.Kind, OriginQueue: f.OriginQueue, Example: f.ErrorMessage, ExampleID: logicalID,
				MinAttempts: attempts, MaxAttempts: attempts}
			g.byKey[k] = grp
		}
	}
	grp.Count++
	grp.MinAttempts = min(grp.MinAttempts, attempts)
	grp.MaxAttempts = max(grp.MaxAttempts, attempts)
	if t := f.FailedAt; !t.IsZero() {
		if grp.FirstFailed.IsZero() || t.Before(grp.FirstFailed) {
			grp.FirstFailed = t
		}
		if t.After(grp.LastFailed) {
			grp.LastFailed = t
		}
	}
	if g.keepIDs && businessID != "" {
		grp.BusinessIDs = append(grp.BusinessIDs, businessID)
	}
	return grp.ID
}

// Len is how many groups there are.
func (g *Groups) Len() int { return len(g.byKey) }

// List gives the groups, largest first, then by ID.
func (g *Groups) List() []Group {
	out := make([]Group, 0, len(g.byKey))
	for _, grp := range g.byKey {
		out = append(out, *grp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// GroupOf is the ID of the group a letter belongs to.
func GroupOf(f Failure) string { return FingerprintOf(f).ID() }

// Normalize replaces the variable parts of an error message with
// placeholders, so "Order 1001 not found" and "Order 1002 not found" read
// alike: quoted strings become <str>, e-mail addresses <email>, UUIDs
// <uuid>, hexadecimal numbers and long hex strings <hex>, and every other
// run of digits <n>. Runs of white space become one space.
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			i++
			continue
		case space && b.Len() > 0:
			b.WriteByte(' ')
		}
		space = false
		if c == '"' || c == '\'' || c == '`' {
			if j := strings.IndexByte(s[i+1:], c); j >= 0 && j <= 512 {
				b.WriteString("<str>")
				i += j + 2
				continue
			}
		}
		if !tokenByte(c) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(s) && tokenByte(s[j]) {
			j++
		}
		writeToken(&b, s[i:j])
		i = j
	}
	return b.String()
}

// tokenByte is a byte of a word that may hold a variable part: letters,
// digits and the punctuation inside IDs and addresses.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == ',' || c == '@' || c == '+' || c >= 0x80
}

func writeToken(b *strings.Builder, tok string) {
	// Trailing sentence punctuation is not part of the value.
	tail := ""
	for len(tok) > 0 && (tok[len(tok)-1] == '.' || tok[len(tok)-1] == ',' || tok[len(tok)-1] == '-') {
		tail = tok[len(tok)-1:] + tail
		tok = tok[:len(tok)-1]
	}
	switch {
	case tok == "":
	case isEmail(tok):
		b.WriteString("<email>")
	case isUUID(tok):
		b.WriteString("<uuid>")
	case isHex(tok):
		b.WriteString("<hex>")
	default:
		digits(b, tok)
	}
	b.WriteString(tail)
}

func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && strings.IndexByte(s[at+1:], '.') > 0
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !hexDigit(s[i]) {
			return false
		}
	}
	return true
}

// isHex is 0x followed by hex digits, or eight or more hex digits with
// at least one digit and one letter (a digest, an object ID).
func isHex(s string) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			if !hexDigit(s[i]) {
				return false
			}
		}
		return true
	}
	if len(s) < 8 {
		return false
	}
	var digit, letter bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case hexDigit(c):
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// digits writes tok with every run of digits (with the separators inside
// a decimal number) as <n>.
func digits(b *strings.Builder, tok string) {
	for i := 0; i < len(tok); {
		c := tok[i]
		if c < '0' || c > '9' {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(tok) && (tok[j] >= '0' && tok[j] <= '9' ||
			(tok[j] == '.' || tok[j] == ',') && j+1 < len(tok) && tok[j+1] >= '0' && tok[j+1] <= '9') {
			j++
		}
		b.WriteString("<n>")
		i = j
	}
}

// GroupFilter is filter narrowed to the failure group id (a group's ID or
// a prefix of at least four of its hex digits), as a filter expression.
func GroupFilter(filter, id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 || len(id) > 10 || !isHexText(id) {
		return "", fmt.Errorf("--group %q: a group ID is 4 to 10 hex digits, as dlq groups lists them", id)
	}
	cond := `group == "` + id + `"`
	if len(id) < 10 {
		cond = `group startsWith "` + id + `"`
	}
	if strings.TrimSpace(filter) == "" {
		return cond, nil
	}
	return "(" + filter + ") && " + cond, nil
}

func isHexText(s string) bool {
	for i := 0; i < len(s); i++ {
		if !hexDigit(s[i]) {
			return false
		}
	}
	return true
}
