package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/warrenops/warren/domain"
)

// The delivery-limit guard's refusal is worded for the DLQ screen too;
// on the command line it names the flag that takes the risk.
func TestARefusalOnTheCommandLineNamesItsFlag(t *testing.T) {
	refused := &domain.RefusedError{Queue: domain.QueueInfo{Name: "orders.dlq", Vhost: "/"}, Reason: "allow the risk explicitly to browse anyway"}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"the refusal", refused, " (--allow-limit-risk)"},
		{"a refusal wrapped", fmt.Errorf("dlq ls: %w", refused), " (--allow-limit-risk)"},
		{"a refusal that names it already", fmt.Errorf("%w; --allow-limit-risk is ignored in a read-only context", refused), ""},
		{"another error", errors.New("broker down"), ""},
	} {
		if got := flagHint(c.err); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
