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
