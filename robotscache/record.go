package robotscache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/trawl-crawler/trawl/robots"
)

// Encoding of the record a Keeper keeps for one origin under its 'r' key
// (store.RobotsKey). Part of the on-disk format (store.FormatVersion):
// changing it makes stores written before unreadable, so it must come with
// a format version bump.
//
//	+---------+-------+----------+-----------------+-----------------+
//	| version | flags | attempts | at              | outage since    |
//	| 1 B = 4 | 1 B   | uvarint  | varint, unix ns | varint, unix ns |
//	|         |       |          |                 | 0 = no outage   |
//	+---------+-------+----------+-----------------+-----------------+
//
// and then, only if flags has flagHop, a redirect chain in progress (RFC
// 9309 2.3.1.2), so that a run after a stop or a crash, or a new owner of
// the host's partition, goes on with the next hop instead of asking for
// /robots.txt again:
//
//	+----------+-----------------+----------------------------------+
//	| hops     | hop at          | next hop's URL                   |
//	| uvarint, | varint, unix ns | uvarint length (1..maxHopURL)    |
//	| 1..5     | never 0         | and the bytes                    |
//	+----------+-----------------+----------------------------------+
//
// and then, only if flags has flagCopy, the last good answer:
//
//	+-------------+-----------------+---------------------------------+
//	| HTTP status | fetched at      | body                            |
//	| uvarint     | varint, unix ns | to the end, at most robots.MaxBytes+1  |
//	+-------------+-----------------+---------------------------------+
//
// flags: 0x01 pending (a request was sent at "at" and its answer has not
// been recorded: Keeper.Begin writes it, synced, before the request goes
// out); 0x02 a copy follows; 0x04 a redirect hop follows (hops followed
// so far, when the last redirect came, the URL it points to). Other bits
// must be zero. A record with a hop is read by no binary older than the
// hop; their decoders refuse the flag and fetch /robots.txt again.
//
// attempts counts consecutive unreachable answers (RFC 9309 2.3.1.4: 429,
// 5xx, network errors); outage since is the time of the first of them and
// is zero exactly when attempts is 0. "at" is when the last answer came
// (or, pending, when the request went out). The copy is a 2xx or 4xx
// answer (or a redirect chain that did not end, RFC 9309 2.3.1.2), used
// for TTL from its fetch time and kept through an outage for the outage
// rule. Version 4 follows the three one-byte tags of the layout it
// replaces (1 copy, 2 failure, 3 pending), so that an old value can never
// be read as a new one.
const (
	recordVersion = 4

	flagPending = 0x01
	flagCopy    = 0x02
	flagHop     = 0x04
)

// maxHopURL bounds a stored hop's URL, in bytes.
const maxHopURL = 8 << 10

// maxAttempts bounds a decoded attempt count.
const maxAttempts = 1 << 20

// record is the decoded value of an 'r' key.
type record struct {
	pending     bool
	attempts    int
	at          time.Time
	outageSince time.Time // zero when attempts == 0
	copy        *storedCopy

	// A redirect chain in progress: hops followed (0: none, and then
	// hopAt and next are zero), when the last redirect was answered, and
	// the URL it points to.
	hops  int
	hopAt time.Time
	next  string
}

// storedCopy is a good robots.txt answer as kept in the store.
type storedCopy struct {
	status  int // 200..499 but not 429
	fetched time.Time
	body    []byte
}

// policy parses c.
func (c *storedCopy) policy() *robots.Policy {
	return robots.FromResult(robots.FetchResult{Status: c.status, Body: c.body, At: c.fetched})
}

// appendTime appends t as varint Unix nanoseconds, 0 for the zero time.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

func encodeRecord(r record) []byte {
	n := 1 + 1 + 3*binary.MaxVarintLen64
	if r.copy != nil {
		n += 2*binary.MaxVarintLen64 + len(r.copy.body)
	}
	if r.hops > 0 {
		n += 3*binary.MaxVarintLen64 + len(r.next)
	}
	b := make([]byte, 0, n)
	var flags byte
	if r.pending {
		flags |= flagPending
	}
	if r.copy != nil {
		flags |= flagCopy
	}
	if r.hops > 0 {
		flags |= flagHop
	}
	b = append(b, recordVersion, flags)
	b = binary.AppendUvarint(b, uint64(max(0, r.attempts)))
	b = appendTime(b, r.at)
	b = appendTime(b, r.outageSince)
	if r.hops > 0 {
		b = binary.AppendUvarint(b, uint64(r.hops))
		b = appendTime(b, r.hopAt)
		b = binary.AppendUvarint(b, uint64(len(r.next)))
		b = append(b, r.next...)
	}
	if r.copy != nil {
		b = binary.AppendUvarint(b, uint64(max(0, r.copy.status)))
		b = appendTime(b, r.copy.fetched)
		b = append(b, r.copy.body...)
	}
	return b
}

// errRecord is wrapped by every decoding error.
var errRecord = errors.New("robots: bad stored record")

// decodeRecord decodes v. The copy's body aliases v.
func decodeRecord(v []byte) (record, error) {
	var r record
	bad := func(what string) (record, error) {
		return record{}, fmt.Errorf("%w: %s", errRecord, what)
	}
	if len(v) < 2 {
		return bad("short")
	}
	if v[0] != recordVersion {
		return bad(fmt.Sprintf("version %d, want %d", v[0], recordVersion))
	}
	flags := v[1]
	if flags&^(flagPending|flagCopy|flagHop) != 0 {
		return bad(fmt.Sprintf("flags %#x", flags))
	}
	v = v[2:]
	attempts, n := binary.Uvarint(v)
	if n <= 0 || attempts > maxAttempts {
		return bad("attempts")
	}
	v = v[n:]
	var ok bool
	if r.at, v, ok = readTime(v); !ok {
		return bad("time")
	}
	if r.outageSince, v, ok = readTime(v); !ok {
		return bad("outage start")
	}
	r.pending, r.attempts = flags&flagPending != 0, int(attempts)
	if (r.attempts == 0) != r.outageSince.IsZero() {
		return bad("attempts and outage start disagree")
	}
	if flags&flagHop != 0 {
		hops, n := binary.Uvarint(v)
		if n <= 0 || hops < 1 || hops > robots.MaxRedirects {
			return bad("redirect hops")
		}
		v = v[n:]
		if r.hopAt, v, ok = readTime(v); !ok || r.hopAt.IsZero() {
			return bad("redirect time")
		}
		size, n := binary.Uvarint(v)
		if n <= 0 || size < 1 || size > maxHopURL || uint64(len(v)-n) < size {
			return bad("redirect URL")
		}
		r.hops, r.next = int(hops), string(v[n:n+int(size)])
		v = v[n+int(size):]
	}
	if flags&flagCopy == 0 {
		if len(v) != 0 {
			return bad("trailing bytes")
		}
		return r, nil
	}
	status, n := binary.Uvarint(v)
	if n <= 0 || !robots.GoodStatus(int(min(status, 1000))) {
		return bad("copy status")
	}
	v = v[n:]
	c := &storedCopy{status: int(status)}
	if c.fetched, v, ok = readTime(v); !ok {
		return bad("copy time")
	}
	if len(v) > robots.MaxBytes+1 {
		return bad("copy body too long")
	}
	c.body = v
	r.copy = c
	return r, nil
}

// readTime reads what appendTime wrote.
func readTime(v []byte) (time.Time, []byte, bool) {
	ns, n := binary.Varint(v)
	if n <= 0 {
		return time.Time{}, nil, false
	}
	if ns == 0 {
		return time.Time{}, v[n:], true
	}
	return time.Unix(0, ns).UTC(), v[n:], true
}
