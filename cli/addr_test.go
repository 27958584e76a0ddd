//go:build integration

package cli

import (
	"net/url"

	"github.com/warrenops/warren/testkit"
)

// The broker under test (WARREN_TEST_BROKER picks 3.10 or 4.3), as a
// config names it: no credentials in the URLs.
var (
	testAMQPHost = hostOf(testkit.AMQPURL)
	testMgmtHost = hostOf(testkit.MgmtURL)
	testAMQP     = "amqp://" + testAMQPHost + "/"
	testMgmt     = testkit.MgmtURL
)

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic("test broker address " + raw + ": " + err.Error())
	}
	return u.Host
}
