//go:build integration

package testkit

// Integration is set when the tests are built with the integration tag:
// those that talk to the real brokers and database are in the build.
const Integration = true
