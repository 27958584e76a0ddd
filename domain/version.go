package domain

import (
	"strconv"
	"strings"
)

// Version is a RabbitMQ release, compared by major and minor.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "3.13.7", "4.0.0-rc.1" or "4.1"; unknown text gives
// the zero Version, which is older than every release.
func ParseVersion(s string) Version {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+ "); i >= 0 {
		s = s[:i]
	}
	var v Version
	parts := strings.SplitN(s, ".", 3)
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v
		}
		*dst[i] = n
	}
	return v
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// AtLeast reports whether the RabbitMQ version string is major.minor or
// later.
func AtLeast(version string, major, minor int) bool {
	return ParseVersion(version).AtLeast(major, minor)
}

// CarriesPublishedDeaths reports whether the broker goes on counting on
// an x-death header a publisher set, as RabbitMQ did before 3.13 and again
// from 3.13.3; 3.13.0–3.13.2 and 4.0 on ignore it and start their own
// (docs/ARCHITECTURE.md §4.2). An unreadable version is taken for a
// current one.
func CarriesPublishedDeaths(version string) bool {
	if _, _, _, ok := parseVersion(version); !ok {
		return false
	}
	v := ParseVersion(version)
	return v.Major < 4 && !(v.Major == 3 && v.Minor == 13 && v.Patch < 3)
}

// ReturnCountsTowardLimit reports whether basic.nack with requeue counts toward
// a quorum queue's delivery limit on this broker version: it does before
// 4.3 (docs/ARCHITECTURE.md §4.2). An unreadable version is treated as costly, and so
// is a pre-release of 4.3.0, which may predate the change.
func ReturnCountsTowardLimit(version string) bool {
	major, minor, pre, ok := parseVersion(version)
	if !ok {
		return true
	}
	if major != 4 {
		return major < 4
	}
	return minor < 3 || (minor == 3 && pre)
}

// parseVersion reads "4.3.0", "3.10.8", "4.3.0-rc.1" or "4.2.1+build".
// pre is set for a pre-release of the x.y.0 release.
func parseVersion(v string) (major, minor int, pre, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	core, suffix, hasSuffix := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) < 2 {
		return 0, 0, false, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false, false
	}
	patch := 0
	if len(parts) > 2 {
		p, err := strconv.Atoi(parts[2])
		if err != nil {
			return 0, 0, false, false
		}
		patch = p
	}
	return major, minor, hasSuffix && suffix != "" && patch == 0, true
}
