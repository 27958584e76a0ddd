package domain

import amqp "github.com/rabbitmq/amqp091-go"

// ParseDeaths reads the x-death header: an array of tables, most recent
// first. Entries that are not tables are skipped, fields of the wrong
// type are left empty, and a missing or nonsensical count reads as 1
// (the entry exists, so the message died there at least once).
func ParseDeaths(h amqp.Table) []Death {
	return ParseDeathsInto(nil, h, true)
}

// ParseDeathsInto appends to dst[:0], so a scan reuses one slice; a scan
// also has no use for routing keys.
func ParseDeathsInto(dst []Death, h amqp.Table, withKeys bool) []Death {
	dst = dst[:0]
	entries, ok := ValueList(h[HeaderDeath])
	if !ok {
		return dst
	}
	for _, e := range entries {
		t, ok := ValueTable(e)
		if !ok {
			continue
		}
		d := Death{Count: 1}
		d.Queue, _ = ValueText(t["queue"])
		d.Reason, _ = ValueText(t["reason"])
		d.Exchange, _ = ValueText(t["exchange"])
		if n, ok := ValueInt(t["count"]); ok && n > 0 {
			d.Count = n
		}
		d.Time, _ = ValueTime(t["time"])
		d.OriginalExpiration, _ = ValueScalarText(t["original-expiration"])
		if keys, ok := ValueList(t["routing-keys"]); ok && withKeys {
			for _, k := range keys {
				if s, ok := ValueText(k); ok {
					d.RoutingKeys = append(d.RoutingKeys, s)
				}
			}
		}
		dst = append(dst, d)
	}
	return dst
}
