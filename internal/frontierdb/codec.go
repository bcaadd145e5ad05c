package frontierdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
)

// Value encodings. Part of the on-disk format (store.FormatVersion).
//
//	queue item ('q' key; host, level and seq are in the key), and held
//	item ('p' key, the same value; the job is in the key too):
//	+---------+-----+-------+-----------+----------+-----------+-----------------+-------------------+
//	| version | job | depth | redirects | attempts | shape run | via             | URL, host-relative|
//	| 1 B = 3 | uvarint each                                   | uvarint length, | (store.AppendURL) |
//	|         |                                                | then its host-  | to the end        |
//	|         |                                                | relative form   |                   |
//	+---------+-----+-------+-----------+----------+-----------+-----------------+-------------------+
//	via: the URL that led to the item; length 0 if none (a seed). Version 2
//	had no via field and is still read. Version 4 (written for requisites
//	only, so a page's item costs no byte more) has a uvarint requisite
//	(frontier.Item.Requisite) between shape run and via.
//
//	job counters per partition ('k' key; partition and job are in the
//	key), and the whole-store job counters of older stores ('c' key, read
//	once and converted: convert.go):
//	+---------+--------+------+---------+
//	| version | stored | held | dropped |
//	| 1 B = 1 | uvarint each            |
//	+---------+--------+------+---------+
//	stored: the job's items under 'q' keys of the partition (queued or in
//	flight); held: under its 'p' keys; dropped: discarded so far. Unknown
//	trailing bytes are ignored.
//
//	host state ('h' key; the host is in the key):
//	+---------+--------------+---------+-------------+--------+------------+----------+------+-------------+--------+------------------+-------------
//	| version | next allowed | backoff | crawl-delay | leased | duplicates | next seq | dead | dead reason | levels | queued per level | wait reason
//	| 1 B = 4 | varint unix  | uvarint | uvarint ns  | uvarint| uvarint    | uvarint  | 1 B  | 1 B         | uvarint| uvarint each     | 1 B
//	|         | ns (0: zero) | ns      |             |        |            |          |      |             |        |                  |
//	+---------+--------------+---------+-------------+--------+------------+----------+------+-------------+--------+------------------+-------------
//	dead reason: why a dead host was given up (deadReasons: 1 host-dropped,
//	2 budget, 3 duplicates, 4 failing); 0 for a live host. A reason this
//	code does not know decodes as none. wait reason: the rule that set next
//	allowed (gapReasons: 0 none, 1 min-delay, 2 policy, 3 crawl-delay,
//	4 adaptive, 5 backoff, 6 retry-after, 7 robots-retry-after, 8 robots
//	unavailable, 9 robots answer lost, 10 takeover hold, 11 IP slot); an
//	unknown code decodes as none. Version 3 had no wait reason (frontier.New
//	then shows a host in backoff as backoff), version 2 no dead reason
//	either, version 1 no duplicates either; all are still read, without the
//	reasons (frontier.New then shows a dead host as host-dropped, or as its
//	budget if spent).

// Encoding versions, per value kind.
const (
	codecVersion = 4 // host state (1: no duplicates count; 2: no dead reason; 3: no wait reason)
	itemVersion  = 3 // queue and held items of pages (1: no job, format version 2; 2: no via)
	reqVersion   = 4 // queue and held items of requisites: version 3 and a requisite count
	jobVersion   = 1 // job counters
)

var errShort = errors.New("value too short")

// deadReasons are the host state's dead reason codes: the index is the
// code on disk, fixed whatever frontier.DropReason's values become.
var deadReasons = [...]frontier.DropReason{0, frontier.DropHost, frontier.DropBudget, frontier.DropDuplicates, frontier.DropFailing}

// gapReasons are the host state's wait reason codes: the index is the
// code on disk, fixed whatever frontier.GapReason's values become.
var gapReasons = [...]frontier.GapReason{frontier.GapNone, frontier.GapMinDelay, frontier.GapPolicy, frontier.GapCrawlDelay,
	frontier.GapAdaptive, frontier.GapBackoff, frontier.GapRetryAfter, frontier.GapRobotsRetryAfter, frontier.GapRobots,
	frontier.GapLostAnswer, frontier.GapHold, frontier.GapIPSlot}

// gapReasonCode is why's code in gapReasons, 0 if it has none.
func gapReasonCode(why frontier.GapReason) byte {
	for i, r := range gapReasons {
		if r == why {
			return byte(i)
		}
	}
	return 0
}

// deadReasonCode is why's code in deadReasons, 0 if it has none.
func deadReasonCode(why frontier.DropReason) byte {
	for i, r := range deadReasons {
		if i > 0 && r == why {
			return byte(i)
		}
	}
	return 0
}

func appendItem(dst []byte, it frontier.Item) []byte {
	if it.Requisite > 0 {
		dst = append(dst, reqVersion)
	} else {
		dst = append(dst, itemVersion)
	}
	dst = binary.AppendUvarint(dst, uint64(it.Job))
	dst = binary.AppendUvarint(dst, uint64(it.Depth))
	dst = binary.AppendUvarint(dst, uint64(it.Redirects))
	dst = binary.AppendUvarint(dst, uint64(it.Attempts))
	dst = binary.AppendUvarint(dst, uint64(it.ShapeRun))
	if it.Requisite > 0 {
		dst = binary.AppendUvarint(dst, uint64(it.Requisite))
	}
	if it.Via == "" {
		dst = append(dst, 0)
	} else {
		tag, rest := store.ShortURL(it.Host, it.Via)
		dst = binary.AppendUvarint(dst, uint64(1+len(rest)))
		dst = append(append(dst, tag), rest...)
	}
	return store.AppendURL(dst, it.Host, it.URL)
}

// reader decodes varints, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errShort
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// small converts a decoded count, refusing absurd values from a corrupt
// store instead of overflowing.
func (r *reader) small(v uint64) int {
	if v > 1<<40 && r.err == nil {
		r.err = fmt.Errorf("value %d out of range", v)
	}
	return int(v)
}

func decodeItem(host string, v []byte) (frontier.Item, error) {
	r := &reader{b: v}
	var it frontier.Item
	ver := r.byte1()
	if r.err == nil && ver != itemVersion && ver != 2 && ver != reqVersion {
		return it, fmt.Errorf("queue item encoding version %d, want 2 to %d", ver, reqVersion)
	}
	job := r.uvarint()
	if job > 1<<32-1 && r.err == nil {
		r.err = fmt.Errorf("job %d out of range", job)
	}
	it.Job = uint32(job)
	it.Depth = r.small(r.uvarint())
	it.Redirects = r.small(r.uvarint())
	it.Attempts = r.small(r.uvarint())
	it.ShapeRun = r.small(r.uvarint())
	if ver == reqVersion {
		it.Requisite = r.small(r.uvarint())
	}
	if ver >= 3 {
		if n := r.small(r.uvarint()); n > 0 && r.err == nil {
			if n > len(r.b) {
				return it, fmt.Errorf("queue item: via of %d bytes, %d left", n, len(r.b))
			}
			via, err := store.ExpandURL(host, r.b[:n])
			if err != nil {
				return it, fmt.Errorf("queue item: via: %w", err)
			}
			it.Via, r.b = via, r.b[n:]
		}
	}
	if r.err != nil {
		return it, fmt.Errorf("queue item: %w", r.err)
	}
	url, err := store.ExpandURL(host, r.b)
	if err != nil {
		return it, fmt.Errorf("queue item: %w", err)
	}
	it.URL, it.Host = url, host
	return it, nil
}

func appendHostState(dst []byte, h frontier.HostState) []byte {
	dst = append(dst, codecVersion)
	var next int64
	if !h.NextAllowed.IsZero() {
		next = h.NextAllowed.UnixNano()
	}
	dst = binary.AppendVarint(dst, next)
	dst = binary.AppendUvarint(dst, uint64(max(0, h.Backoff)))
	dst = binary.AppendUvarint(dst, uint64(max(0, h.CrawlDelay)))
	dst = binary.AppendUvarint(dst, uint64(max(0, h.Leased)))
	dst = binary.AppendUvarint(dst, uint64(max(0, h.Duplicates)))
	dst = binary.AppendUvarint(dst, h.NextSeq)
	dead := byte(0)
	if h.Dead {
		dead = 1
	}
	dst = append(dst, dead)
	var why byte
	if h.Dead {
		why = deadReasonCode(h.DeadReason)
	}
	dst = append(dst, why)
	dst = binary.AppendUvarint(dst, uint64(len(h.Queued)))
	for _, n := range h.Queued {
		dst = binary.AppendUvarint(dst, uint64(max(0, n)))
	}
	return append(dst, gapReasonCode(h.Why))
}

func decodeHostState(v []byte) (frontier.HostState, error) {
	r := &reader{b: v}
	var h frontier.HostState
	ver := r.byte1()
	if r.err == nil && (ver < 1 || ver > codecVersion) {
		return h, fmt.Errorf("host state encoding version %d, want 1 to %d", ver, codecVersion)
	}
	if next := r.varint(); next != 0 {
		h.NextAllowed = time.Unix(0, next)
	}
	h.Backoff = time.Duration(r.uvarint())
	h.CrawlDelay = time.Duration(r.uvarint())
	h.Leased = r.small(r.uvarint())
	if ver >= 2 {
		h.Duplicates = r.small(r.uvarint())
	}
	h.NextSeq = r.uvarint()
	h.Dead = r.byte1() == 1
	if ver >= 3 {
		if why := int(r.byte1()); h.Dead && why < len(deadReasons) {
			h.DeadReason = deadReasons[why]
		}
	}
	levels := r.small(r.uvarint())
	if levels > 64 && r.err == nil {
		r.err = fmt.Errorf("%d priority levels", levels)
	}
	for i := 0; i < levels && r.err == nil; i++ {
		h.Queued = append(h.Queued, r.small(r.uvarint()))
	}
	if ver >= 4 {
		if why := int(r.byte1()); why < len(gapReasons) {
			h.Why = gapReasons[why]
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return h, fmt.Errorf("host state: %w", r.err)
	}
	return h, nil
}

func appendJobState(dst []byte, j frontier.JobState) []byte {
	dst = append(dst, jobVersion)
	dst = binary.AppendUvarint(dst, uint64(max(0, j.Stored)))
	dst = binary.AppendUvarint(dst, uint64(max(0, j.Held)))
	return binary.AppendUvarint(dst, uint64(max(0, j.Dropped)))
}

func decodeJobState(v []byte) (frontier.JobState, error) {
	r := &reader{b: v}
	var j frontier.JobState
	if ver := r.byte1(); r.err == nil && ver != jobVersion {
		return j, fmt.Errorf("job counters encoding version %d, want %d", ver, jobVersion)
	}
	j.Stored = r.small(r.uvarint())
	j.Held = r.small(r.uvarint())
	j.Dropped = r.small(r.uvarint())
	if r.err != nil {
		return j, fmt.Errorf("job counters: %w", r.err)
	}
	return j, nil
}
