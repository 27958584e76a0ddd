package format

import (
	"fmt"

	"github.com/warrenops/warren/domain"
)

// CountOf is a count the broker may not have reported: Unknown when nil.
func CountOf(n *int64) string {
	if n == nil {
		return Unknown
	}
	return Count(*n)
}

// RateOf is a rate the broker may not have reported: Unknown when nil.
func RateOf(r *float64) string {
	if r == nil {
		return Unknown
	}
	return Rate(*r)
}

// Confirm is a channel's confirm mode: yes, no, or Unknown.
func Confirm(c domain.ChannelStat) string {
	switch {
	case c.Confirm == nil:
		return Unknown
	case *c.Confirm:
		return "yes"
	}
	return "no"
}

// Unconfirmed is a channel's unconfirmed publishes; Unknown when the
// channel is not in confirm mode (nothing to confirm) or the broker did
// not say.
func Unconfirmed(c domain.ChannelStat) string {
	if c.Confirm == nil || !*c.Confirm {
		return Unknown
	}
	return CountOf(c.Unconfirmed)
}

// Prefetch is a channel's prefetch: the per-consumer limit ("none" for
// no limit), with the channel-wide one as "/50g" when set.
func Prefetch(c domain.ChannelStat) string {
	if c.Prefetch == nil {
		return Unknown
	}
	s := "none"
	if *c.Prefetch > 0 {
		s = Count(*c.Prefetch)
	}
	if c.GlobalPrefetch != nil && *c.GlobalPrefetch > 0 {
		s += fmt.Sprintf("/%dg", *c.GlobalPrefetch)
	}
	return s
}

// Confirms sums what publishers wait for: "unconfirmed 37 on 2
// channels", or "confirms: none pending".
func Confirms(unconfirmed int64, channels int) string {
	if unconfirmed == 0 {
		return "confirms: none pending"
	}
	on := "1 channel"
	if channels != 1 {
		on = fmt.Sprintf("%d channels", channels)
	}
	return "unconfirmed " + Count(unconfirmed) + " on " + on
}
