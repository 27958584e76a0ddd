// Package demo seeds a local RabbitMQ (and, optionally, PostgreSQL) with a
// realistic scene for warren and keeps it moving.
//
// The scene lives in its own vhost (default "warren-demo") so it never
// mixes with an operator's queues:
//
//   - an orders flow whose consumer rejects poison orders; every failure is
//     dead-lettered by the broker through a two-tier TTL retry path
//     (orders.retry, orders.retry.2) and the third one lands in orders.dlq;
//   - orders.dlq also collects, from sibling queues, messages the broker
//     dead-lettered because they expired (queue TTL), overflowed a bounded
//     queue (maxlen) and exceeded a quorum queue's delivery limit;
//   - payments is paired with payments.dlq through a policy rather than
//     queue arguments, and its dead letters exercise warren's fallbacks
//     (per-message expiration, no message_id, no event_id, a binary body);
//   - shipping has slow consumers holding unacknowledged deliveries, the
//     email queue grows, the search reindex queue drains a backlog, and the
//     order gateway publishes in confirm mode;
//   - with PostgreSQL, an inbox table marks about half of orders.dlq's
//     event IDs as already processed and receives a stream of fresh rows.
//
// Idempotency: Seed treats the scene's queues as its own. Each run purges
// them and refills them to the same known content, with deterministic event
// and message IDs, so re-running leaves the same dead letters rather than
// piling up duplicates. Deliveries another client holds unacknowledged at
// that moment (a browse session, a running demo) escape the purge and come
// back afterwards; stop those first for exact counts.
package demo
