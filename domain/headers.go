package domain

// Header names the broker and warren write (docs/ARCHITECTURE.md §4.2, §4.4).
const (
	HeaderDeath              = "x-death"
	HeaderFirstDeathQueue    = "x-first-death-queue"
	HeaderFirstDeathReason   = "x-first-death-reason"
	HeaderFirstDeathExchange = "x-first-death-exchange"
	HeaderLastDeathQueue     = "x-last-death-queue"
	HeaderLastDeathReason    = "x-last-death-reason"
	HeaderLastDeathExchange  = "x-last-death-exchange"
	HeaderDeliveryCount      = "x-delivery-count"
	HeaderAcquiredCount      = "x-acquired-count"
	HeaderStreamOffset       = "x-stream-offset"
	HeaderReplayCount        = "x-warren-replay-count"
	HeaderReplayedAt         = "x-warren-replayed-at"
	// A replayed copy's attempt count when it was replayed, and per
	// queue the sum of the x-death counts it carried then, a table
	// (docs/ARCHITECTURE.md §2).
	HeaderReplayAttempts   = "x-warren-attempts"
	HeaderReplayDeaths     = "x-warren-deaths"
	HeaderQuarantineReason = "x-warren-quarantine-reason"
	// A quarantined copy's attempt count when it was quarantined: in the
	// parking queue, nothing else says what its origin's delivery
	// limit made of its x-death.
	HeaderQuarantineAttempts = "x-warren-quarantine-attempts"
	HeaderOperation          = "x-warren-operation"
)

// Dead-lettering reasons.
const (
	ReasonRejected      = "rejected"
	ReasonExpired       = "expired"
	ReasonMaxLen        = "maxlen"
	ReasonDeliveryLimit = "delivery_limit"
)
