// Package dlqfile is the file `warren dlq export` writes and `warren dlq
// import` reads (docs/ARCHITECTURE.md §4.14): JSON Lines, a header line
// then one line per message, every property and every header with its
// AMQP type, so a timestamp stays a timestamp and a nested table a table
// when the message is published again.
package dlqfile
