package ui

import (
	"strings"
	"testing"
)

func TestHeaderWarnsOfAnUnencryptedProductionBroker(t *testing.T) {
	for _, unencrypted := range []bool{true, false} {
		m := newRoot(Options{Context: "prod-eu", Environment: "prod", Unencrypted: unencrypted})
		m, _ = step(t, m, m.Init()())
		head := strings.Split(m.View(), "\n")[0]
		if got := strings.Contains(head, "UNENCRYPTED"); got != unencrypted {
			t.Errorf("Unencrypted %v: the header says UNENCRYPTED: %v\n%s", unencrypted, got, head)
		}
		if !strings.Contains(head, "PRODUCTION") {
			t.Errorf("the header lost the production banner:\n%s", head)
		}
	}
}
