package domain

import "time"

// Sample is one point of a queue's recent history.
type Sample struct {
	At    time.Time
	Value float64
}

// QueueDetail is what the queue screen shows: the queue with rates and
// head timestamp, who consumes it and how much they may hold.
type QueueDetail struct {
	Queue     Queue
	Consumers []Consumer
	// Channels are the channels of the consumers; ChannelsNote says why
	// they are missing when the broker does not report them.
	Channels     []Channel
	ChannelsNote string
	// Publishers are the channels publishing to the exchanges that route
	// to the queue, where the broker's rates mode links them;
	// PublishersNote says why they are not known otherwise.
	Publishers     []Publisher
	PublishersNote string
	// UnackedUsed is the queue's unacknowledged deliveries; UnackedAllowed
	// the sum of its consumers' prefetch limits (3 consumers × 20 = 60).
	// UnackedUnlimited is set when some consumer has no limit, so the
	// allowed figure is no bound.
	UnackedUsed      int64
	UnackedAllowed   int64
	UnackedUnlimited bool
	// DeliveryLimit is -1 when none applies.
	DeliveryLimit int64
	// Findings are the topology checks (docs/ARCHITECTURE.md §4.7) about this queue.
	Findings []Finding
	// Depth, PublishRates and AckRates cover the last ten minutes in
	// steps of ten seconds, oldest first, when the API keeps them.
	Depth        []Sample
	PublishRates []Sample
	AckRates     []Sample
	StatsAge     time.Duration
	TakenAt      time.Time
}
