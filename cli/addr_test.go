//go:build !unit

package cli

import (
	"net/url"

	"github.com/warrenops/warren/sources/brokertest"
)

// The broker under test (WARREN_TEST_BROKER picks 3.10 or 4.3), as a
// config names it: no credentials in the URLs.
var (
	testAMQPHost = hostOf(brokertest.AMQPURL)
	testMgmtHost = hostOf(brokertest.MgmtURL)
	testAMQP     = "amqp://" + testAMQPHost + "/"
	testMgmt     = brokertest.MgmtURL
)

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic("test broker address " + raw + ": " + err.Error())
	}
	return u.Host
}
