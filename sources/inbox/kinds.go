package inbox

import (
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// kind is how IDs compare with the inbox's ID column. PostgreSQL rejects
// the whole `= ANY($1)` query if one element does not parse as the
// column's type, so IDs the column cannot hold are left out (they are
// pending by definition), and IDs are matched back to the rows in the
// form PostgreSQL prints them.
type kind int

const (
	kindText kind = iota
	kindUUID
	kindInt16
	kindInt32
	kindInt64
)

func columnKind(arrayOID uint32) kind {
	switch arrayOID {
	case pgtype.UUIDArrayOID:
		return kindUUID
	case pgtype.Int2ArrayOID:
		return kindInt16
	case pgtype.Int4ArrayOID:
		return kindInt32
	case pgtype.Int8ArrayOID:
		return kindInt64
	}
	return kindText
}

// prepare returns the query argument and, per normalised key, the
// original IDs it stands for.
func (k kind) prepare(ids []string) ([]string, map[string][]string) {
	args := make([]string, 0, len(ids))
	byKey := make(map[string][]string, len(ids))
	for _, id := range ids {
		key, ok := k.normal(id)
		if !ok {
			continue
		}
		if _, seen := byKey[key]; !seen {
			args = append(args, id)
		}
		byKey[key] = append(byKey[key], id)
	}
	return args, byKey
}

// key normalises an ID as the database returned it.
func (k kind) key(dbID string) string {
	key, _ := k.normal(dbID)
	return key
}

func (k kind) normal(id string) (string, bool) {
	switch k {
	case kindUUID:
		return uuidKey(id)
	case kindInt16:
		return intKey(id, 16)
	case kindInt32:
		return intKey(id, 32)
	case kindInt64:
		return intKey(id, 64)
	}
	return id, true
}

// uuidKey accepts the spellings PostgreSQL accepts (any case, optional
// braces, hyphens between groups of four digits) as 32 lower-case hex
// digits.
func uuidKey(s string) (string, bool) {
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	var b strings.Builder
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && digits > 0 && digits%4 == 0 && i+1 < len(s) && s[i+1] != '-':
			continue
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		b.WriteByte(c)
		digits++
	}
	return b.String(), digits == 32
}

func intKey(s string, bits int) (string, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}
