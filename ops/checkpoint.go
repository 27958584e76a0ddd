package ops

import (
	"fmt"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
)

// signingKey is the context's audit signing key, nil when it names none.
// A key that cannot be read refuses the operation before anything moves,
// as an audit store that cannot be written does.
func (o *Ops) signingKey() (*audit.SigningKey, error) {
	path := o.c.Context.AuditSigningKey
	if path == "" {
		return nil, nil
	}
	load := audit.LoadSigningKey
	if audit.IsAgentKey(path) {
		load = audit.LoadAgentKey
	}
	k, err := load(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; nothing was changed", actions.ErrAuditUnavailable, err)
	}
	return k, nil
}
