package domain

import "testing"

// Channels are ordered by the order of magnitude of what they have
// unconfirmed: a count that flips between 0 and a few does not reorder
// the rows at each refresh; a backlog ten times larger rises.
func TestChannelsAreOrderedByTheMagnitudeOfTheirBacklog(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	chs := []ChannelStat{{Name: "d", Unconfirmed: n(1)}, {Name: "a", Unconfirmed: n(0)}, {Name: "c"}, {Name: "b", Unconfirmed: n(250)}, {Name: "e", Unconfirmed: n(40)}}
	SortChannels(chs)
	var got string
	for _, c := range chs {
		got += c.Name
	}
	if got != "beadc" {
		t.Errorf("order %q, want beadc: 250, 40, then 0 and 1 by name, unknown last", got)
	}
}
