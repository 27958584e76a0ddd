package cli

import "testing"

// The seed names the database it wrote the demo's inbox to, without a
// password: a dashboard opened on another one finds no table.
func TestTheDemoNamesItsInboxDatabase(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://postgres@127.0.0.1:5432/test":  "'postgres://postgres@127.0.0.1:5432/test'",
		"postgres://u:s3cret@db/x?sslmode=disable": "'postgres://u:xxxxx@db/x?sslmode=disable'",
		"host=db user=u password=s3cret dbname=x":  "<dsn>",
		"postgres://o'brien@db/x":                  "'postgres://o%27brien@db/x'", // escaped by the URL, so no quote to break
	} {
		if got := shownDSN(dsn); got != want {
			t.Errorf("shownDSN(%q) = %s, want %s", dsn, got, want)
		}
	}
}
