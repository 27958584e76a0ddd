// Package audit keeps warren's tamper-evident log of operator actions: a
// hash chain of records in an append-only JSONL file (the default) or a
// PostgreSQL table shared by a team, with export and verification.
//
// # Hash chain
//
// Records are numbered from seq 1 without gaps. Each record's hash is
//
//	hash = hex(sha256(prev_hash ‖ canonical))
//
// where prev_hash is the previous record's hash as ASCII hex ("" for seq
// 1) and canonical is the record without its hash as one JSON object:
//
//   - keys in this order: seq, time, operator, host, context, action,
//     operation, vhost, queue, target, message_ids, logical_ids, outcome,
//     detail, prev_hash; no whitespace;
//   - time in UTC, RFC 3339 with up to nine fraction digits and trailing
//     zeros dropped ("2024-05-01T03:15:02.123456Z"); stores keep
//     microseconds, the precision PostgreSQL has;
//   - message_ids and logical_ids as arrays ([] when empty), detail as an
//     object with keys sorted bytewise ({} when empty);
//   - strings as Go's encoding/json writes them with HTML escaping off:
//     ", \ and control characters escaped (\n, \r, \t, else \u00XX),
//     U+2028 and U+2029 as \u2028 and \u2029, everything else as UTF-8;
//     invalid UTF-8 is replaced by U+FFFD before a record is hashed.
//
// Editing, deleting, reordering or inserting a record therefore breaks the
// chain at that record, and Verify names the first broken seq. The chain
// proves integrity, not authorship, and cannot see records cut from its
// end: whoever can rewrite the whole store can recompute every hash. A
// Head kept elsewhere (VerifyOptions.ExpectHead) shows both, and signed
// checkpoints (checkpoint.go) show a rewrite; grant the team table INSERT
// and SELECT only.
//
// # Record conventions
//
// Records never hold a message body: only BodyDigest(body) and its size,
// under detail keys body_sha256 and body_size. Secrets never go in a record.
//
// An operation (replay, quarantine, …) writes, all with the same operation
// ID and header fields (Op builds them):
//
//  1. one intent record, outcome "intent", before any message moves; its
//     detail holds the plan: selected, destinations (a JSON array), bytes
//     and skipped_applied. If it cannot be written the operation must not
//     start (Store.Check lets a caller find out before asking the operator).
//  2. outcome records, outcome one of confirmed, returned, nacked, unknown
//     or skipped_applied, each for one or more messages listed in
//     message_ids and logical_ids.
//  3. one final record, outcome "final", whose detail holds the message
//     count per outcome.
//
// With a signing key, a checkpoint record signing the head follows the
// final record (AppendCheckpoint).
//
// An operation without a final record was interrupted or is still running;
// Summaries marks it incomplete. An operation that moves no message (an
// export) writes its final record alone, whose detail says what it took;
// Summaries takes it as done. Records without an operation ID are
// allowed for actions on no messages.
//
// # Stores
//
// The file store holds one record per line and serialises appends across
// processes with flock, reading the last record from the end of the file
// and fsyncing every append. Before each append it syncs a journal of
// the bytes it is about to write (PATH.writing): a line cut short by a
// crash of warren's is set aside by the next append only when that
// journal proves it the start of what warren was writing (torn.go); any
// other damage is reported by Verify and makes further appends fail. The
// PostgreSQL store serialises appends with
// pg_advisory_xact_lock and keeps each record's JSON line beside a few
// query columns.
package audit
