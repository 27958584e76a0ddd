package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// mgmt is the little of the management API the demo needs: creating its
// vhost, granting access and setting a policy.
type mgmt struct {
	base, user, pass string
	hc               *http.Client
}

func newMgmt(o Options) *mgmt {
	return &mgmt{
		base: withoutUserinfo(o.ManagementURL),
		user: o.Username,
		pass: o.Password,
		hc:   &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}},
	}
}

// close drops idle keep-alive connections so no reader goroutine outlives
// the seed.
func (m *mgmt) close() { m.hc.CloseIdleConnections() }

func (m *mgmt) put(ctx context.Context, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, m.base+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("demo: management API %s: %w", m.base, err)
	}
	req.SetBasicAuth(m.user, m.pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.hc.Do(req)
	if err != nil {
		return fmt.Errorf("demo: management API at %s unreachable: %w", m.base, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("demo: management API PUT %s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// prepareVhost creates the vhost, grants the demo user full access on it
// and pairs payments with its DLQ through a policy. All three PUTs replace
// what was there, so repeating them is harmless.
func (m *mgmt) prepareVhost(ctx context.Context, vhost string) error {
	v := url.PathEscape(vhost)
	if err := m.put(ctx, "/api/vhosts/"+v, map[string]string{"description": "warren demo scene"}); err != nil {
		return err
	}
	perm := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	if err := m.put(ctx, "/api/permissions/"+v+"/"+url.PathEscape(m.user), perm); err != nil {
		return err
	}
	return m.put(ctx, "/api/policies/"+v+"/"+url.PathEscape(paymentsPolicy), map[string]any{
		"pattern":    "^" + qPayments + "$",
		"apply-to":   "queues",
		"priority":   0,
		"definition": map[string]any{"dead-letter-exchange": xPaymentsDLX},
	})
}
