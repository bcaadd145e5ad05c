package crawl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/trawl-crawler/trawl/robots"
)

// Encoding of a kept robots.txt ('r' key). Part of the on-disk format
// (store.FormatVersion):
//
//	+---------+------------------+-------------------------+-------------+
//	| version | HTTP status      | fetched at              | body        |
//	| 1 B = 1 | uvarint          | varint, unix ns         | to the end  |
//	+---------+------------------+-------------------------+-------------+
//
// Only fetches that gave a usable answer (2xx, or 4xx meaning no
// restrictions) are kept; an unreachable robots.txt is fetched again.
// While it stays unreachable, a failure record counts the attempts, so
// that the attempt limit holds across restarts:
//
//	+---------+------------------+-------------------------+
//	| 0x02    | attempts uvarint | last attempt varint ns  |
//	+---------+------------------+-------------------------+
//
// Before each robots.txt request a pending record is committed (synced),
// so that a run after a crash knows the host was contacted then even if
// the crash lost the answer, and with it the host's Crawl-delay:
//
//	+---------+------------------+-------------------------+
//	| 0x03    | attempts uvarint | request sent varint ns  |
//	+---------+------------------+-------------------------+
const (
	robotsCodecVersion = 1
	robotsFailureTag   = 2
	robotsPendingTag   = 3
)

func encodeRobotsFailures(attempts int, at time.Time) []byte {
	return encodeRobotsAttempts(robotsFailureTag, attempts, at)
}

func encodeRobotsPending(attempts int, sent time.Time) []byte {
	return encodeRobotsAttempts(robotsPendingTag, attempts, sent)
}

// encodeRobotsAttempts encodes a failure or pending record (tag).
func encodeRobotsAttempts(tag byte, attempts int, at time.Time) []byte {
	b := []byte{tag}
	b = binary.AppendUvarint(b, uint64(max(0, attempts)))
	return binary.AppendVarint(b, at.UnixNano())
}

// decodeRobotsAttempts decodes a failure or pending record: the attempts
// so far, the time of the last one, and whether it is still pending. ok
// is false if v is neither.
func decodeRobotsAttempts(v []byte) (attempts int, at time.Time, pending, ok bool) {
	if len(v) == 0 || (v[0] != robotsFailureTag && v[0] != robotsPendingTag) {
		return 0, time.Time{}, false, false
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n > 1<<20 {
		return 0, time.Time{}, false, false
	}
	ns, j := binary.Varint(v[1+k:])
	if j <= 0 {
		return 0, time.Time{}, false, false
	}
	return int(n), time.Unix(0, ns).UTC(), v[0] == robotsPendingTag, true
}

func encodeRobots(r robots.FetchResult) []byte {
	b := []byte{robotsCodecVersion}
	b = binary.AppendUvarint(b, uint64(max(0, r.Status)))
	b = binary.AppendVarint(b, r.At.UnixNano())
	return append(b, r.Body...)
}

func decodeRobots(v []byte) (robots.FetchResult, error) {
	var r robots.FetchResult
	if len(v) == 0 || v[0] != robotsCodecVersion {
		return r, errors.New("robots copy: unknown encoding version")
	}
	v = v[1:]
	status, n := binary.Uvarint(v)
	if n <= 0 || status > 999 {
		return r, fmt.Errorf("robots copy: bad status")
	}
	v = v[n:]
	at, n := binary.Varint(v)
	if n <= 0 {
		return r, fmt.Errorf("robots copy: bad time")
	}
	r.Status, r.At, r.Body = int(status), time.Unix(0, at).UTC(), v[n:]
	return r, nil
}
