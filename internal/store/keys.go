package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
)

// FormatVersion is the version of the on-disk format: the key layout drawn
// below, the value encodings in docs/design/storage.md and partition.Count. It is
// stored under MetaKey("version") as a 4-byte big-endian integer. Any change
// to the layout, to a value encoding that older code cannot read, or to the
// partition hash must increase it; Open refuses a store of another version
// than FormatVersion and PreviousFormatVersion, and opens one of the latter
// read-only until it is upgraded (see the package comment).
//
// History:
//
//	3: the layout below without 'k' keys: job counters whole-store, in
//	   'c' keys ('t', 'o', 'e', 'w', 'x', 'd' and 'n' keys were added
//	   within 3: a store without them reads as before, and a binary that
//	   predates them ignores them).
//	4: job counters per (job, partition), in 'k' keys; no 'c' keys.
//	   Upgrade from 3 in place: frontierdb's Load counts the 'k' keys
//	   from the queue and held keys, deletes the 'c' keys and writes
//	   version 4, in one synced batch (a 3 store without 'c' keys is just
//	   marked 4). A binary of version 3 refuses a store of 4, where it
//	   would have found no 'c' keys and counted every job from zero.
const FormatVersion uint32 = 4

// PreviousFormatVersion is the one older version Open accepts, as a store
// to upgrade in place to FormatVersion.
const PreviousFormatVersion uint32 = 3

// Key layout. This is part of the on-disk format (FormatVersion): changing
// it makes every existing store unreadable.
//
//	meta (not per host):
//	+------+----------------------+
//	| 'm'  | name (bytes)         |
//	+------+----------------------+
//
//	jobs (not per host; job is the ID the node gave the job):
//	+------+-----------------+
//	| 'j'  | job (4 B, BE)   |   job definition (value owned by the node)
//	| 'c'  | job (4 B, BE)   |   job counters, whole-store (value:
//	|      |                 |   frontierdb); version 3 only: the
//	|      |                 |   upgrade to 4 replaces them by 'k' keys
//	| 't'  | job (4 B, BE)   |   job tally: what it did, over every run
//	|      |                 |   (value: job.Tally; added within version 3)
//	+------+-----------------+
//
//	job counters per partition (version 4: frontierdb's Load upgrades a
//	store of version 3 by counting its 'q' and 'p' keys into 'k' keys and
//	deleting its 'c' keys, in the batch that writes version 4; a binary
//	of version 3 then refuses the store rather than count its jobs from
//	zero. No way back to 3 but --fresh):
//	+------+-----------+-----------------+
//	| 'k'  | partition | job (4 B, BE)   |  the job's counters over the
//	|      | 2 B, BE   |                 |  partition's items (value:
//	|      |           |                 |  frontierdb, as 'c')
//	+------+-----------+-----------------+
//	They sit under PartitionPrefix(KindJobPart, p), so that they move with
//	the partition's checkpoint; a job's totals are their sum.
//
//	content (not per host; keyed by value, so that a fleet shards them
//	by value: a fingerprint's first 16 bits, the digest's first two bytes
//	or the band value, give its partition (partition.OfFingerprint), so a
//	partition's fingerprints are a few key ranges, FingerprintRanges; added
//	within version 3):
//	+------+------------------------------------------------+
//	| 'd'  | SHA-256 of a payload (32 B)                    |  the archived original
//	| 'n'  | band (1 B) | band value (2 B, BE) | SimHash    |  near-duplicate band
//	|      | fingerprint (8 B, BE): simhash.BandKey         |  (value: package dedup)
//	+------+------------------------------------------------+
//
//	per-host kinds:
//	+------+-----------+-----------------+------+------------------------+
//	| kind | partition | host            | 0x00 | suffix (by kind)       |
//	| 1 B  | 2 B, BE   | politeness key, |      |                        |
//	|      |           | never holds 0x00|      |                        |
//	+------+-----------+-----------------+------+------------------------+
//
//	kind 'h' host state:  suffix empty
//	kind 'q' queue item:  suffix = level (1 B) | seq (8 B, big-endian)
//	kind 'u' URL state:   suffix = the canonical URL in host-relative form
//	                      (AppendURL, below; to the end of the key)
//	kind 'r' robots.txt:  suffix = origin "scheme://host:port" (to the end)
//	kind 's' seen by job: suffix = job (4 B, BE) | the canonical URL in
//	                      host-relative form (to the end of the key)
//	kind 'p' held item:   suffix = job (4 B, BE) | level (1 B) |
//	                      seq (8 B, big-endian): a queue item set aside
//	                      while its job is paused, under its queue seq
//	kind 'o' host policy: suffix empty; an operator's policy for the host
//	                      (value: package hostpolicy). Added within
//	                      version 3: a store without such keys reads as
//	                      before, and a binary that predates them ignores them.
//	kind 'e' sitemaps:    suffix = job (4 B, BE) | origin "scheme://host:port"
//	                      (to the end): the job's progress through the
//	                      origin's sitemaps (value: package node,
//	                      sitemaps.go). Added within version 3, like 'o'.
//	kind 'f' TDMRep file: suffix = origin "scheme://host:port" (to the
//	                      end): the origin's /.well-known/tdmrep.json as
//	                      last fetched (value: package node, tdmrep.go).
//	                      Added within version 3, like 'o'.
//
//	recrawl schedule (per partition, ordered by due time; added within
//	version 3: a store without such keys reads as before):
//	+------+-----------+--------------+------+------+------------------+
//	| 'w'  | partition | due: Unix s, | host | 0x00 | the canonical URL|
//	|      | 2 B, BE   | 8 B, BE      |      |      | host-relative    |
//	+------+-----------+--------------+------+------+------------------+
//	                      (value: the node's recrawl entry, package
//	                      internal/store/schedule)
//
//	outbox (URLs found here for partitions another node serves, waiting
//	to be published to their owner; added within version 3: a store
//	without such keys reads as before):
//	+------+-------------------------+---------------+
//	| 'x'  | destination partition   | seq 8 B, BE   |  (value: package
//	|      | 2 B, BE                 |               |  cluster/route)
//	+------+-------------------------+---------------+
//	seq is the outbox's own counter, so entries publish in the order
//	written, per partition.
//
//	replication progress (a fleet member's, per partition; added within
//	version 4: a store without such keys reads as before):
//	+------+-------------------------+
//	| 'g'  | partition 2 B, BE       |  (value: package cluster/progress)
//	+------+-------------------------+
//
// partition is partition.Of(host). Because the partition follows the kind
// byte, PartitionPrefix(kind, p) bounds every key of one kind in one
// partition, and a host's keys of one kind are contiguous. Queue keys sort by
// level, then by sequence number, within a host. Seen and held keys sort by
// job within a host, so that one job's keys of a host are contiguous.

// Host-relative URL form, used for the suffix of 'u' keys and for the URL
// in queue item values (frontierdb): a URL whose scheme is http or https
// and whose host is exactly the key's host drops "scheme://host", which the
// key already says (a third of the bytes of a typical URL key):
//
//	+------+----------------------------------------------+
//	| 0x01 | rest: the URL is "http://"  + host + rest    |
//	| 0x02 | rest: the URL is "https://" + host + rest    |
//	| 0x00 | the URL verbatim (any other URL)             |
//	+------+----------------------------------------------+
//
// rest is empty or starts with '/', ':', '?' or '#'. The form is unique: a
// URL that can take a short form never appears verbatim (ExpandURL refuses
// it), so that decoding and encoding again gives back the same bytes.
const (
	urlVerbatim = 0x00
	urlHTTP     = 0x01
	urlHTTPS    = 0x02
)

// ShortURL returns the tag and rest of url's host-relative form, which
// AppendURL writes as the tag byte followed by rest.
func ShortURL(host, url string) (tag byte, rest string) {
	for _, s := range [...]struct {
		tag    byte
		scheme string
	}{{urlHTTP, "http://"}, {urlHTTPS, "https://"}} {
		if len(url) >= len(s.scheme)+len(host) && url[:len(s.scheme)] == s.scheme && url[len(s.scheme):len(s.scheme)+len(host)] == host {
			rest := url[len(s.scheme)+len(host):]
			if rest == "" || strings.IndexByte("/:?#", rest[0]) >= 0 {
				return s.tag, rest
			}
		}
	}
	return urlVerbatim, url
}

// AppendURL appends url in its host-relative form for host.
func AppendURL(dst []byte, host, url string) []byte {
	tag, rest := ShortURL(host, url)
	return append(append(dst, tag), rest...)
}

// ExpandURL returns the URL that b, its host-relative form for host,
// stands for. The error wraps ErrMalformedKey.
func ExpandURL(host string, b []byte) (string, error) {
	if len(b) == 0 {
		return "", fmt.Errorf("%w: empty URL form", ErrMalformedKey)
	}
	rest := b[1:]
	var url string
	switch b[0] {
	case urlHTTP:
		url = "http://" + host + string(rest)
	case urlHTTPS:
		url = "https://" + host + string(rest)
	case urlVerbatim:
		url = string(rest)
	default:
		return "", fmt.Errorf("%w: URL form tag %#x", ErrMalformedKey, b[0])
	}
	if tag, _ := ShortURL(host, url); tag != b[0] {
		return "", fmt.Errorf("%w: URL %q not in its host-relative form", ErrMalformedKey, url)
	}
	return url, nil
}

// Kind is the first byte of every key.
type Kind byte

// The key kinds.
const (
	KindMeta        Kind = 'm'
	KindHost        Kind = 'h'
	KindQueue       Kind = 'q'
	KindURL         Kind = 'u'
	KindRobots      Kind = 'r'
	KindSeen        Kind = 's'
	KindHeld        Kind = 'p'
	KindPolicy      Kind = 'o'
	KindJob         Kind = 'j'
	KindJobCounters Kind = 'c'
	KindJobTally    Kind = 't'
	KindJobPart     Kind = 'k'
	KindDigest      Kind = 'd'
	KindNear        Kind = 'n'
	KindDue         Kind = 'w'
	KindSitemap     Kind = 'e'
	KindOutbox      Kind = 'x'
	KindProgress    Kind = 'g'
	KindTDMRep      Kind = 'f'
)

// perHost reports whether keys of kind k carry a partition and a host.
func (k Kind) perHost() bool {
	switch k {
	case KindHost, KindQueue, KindURL, KindRobots, KindSeen, KindHeld, KindPolicy, KindSitemap, KindTDMRep:
		return true
	}
	return false
}

func (k Kind) String() string {
	switch k {
	case KindMeta:
		return "meta"
	case KindHost:
		return "host"
	case KindQueue:
		return "queue"
	case KindURL:
		return "url"
	case KindRobots:
		return "robots"
	case KindSeen:
		return "seen"
	case KindHeld:
		return "held"
	case KindPolicy:
		return "policy"
	case KindJob:
		return "job"
	case KindJobCounters:
		return "job counters"
	case KindJobTally:
		return "job tally"
	case KindJobPart:
		return "job partition counters"
	case KindDigest:
		return "digest"
	case KindNear:
		return "near band"
	case KindDue:
		return "recrawl due"
	case KindSitemap:
		return "sitemaps"
	case KindOutbox:
		return "outbox"
	case KindProgress:
		return "progress"
	case KindTDMRep:
		return "tdmrep"
	}
	return fmt.Sprintf("kind(%#x)", byte(k))
}

// hostSep ends the host name in a per-host key.
const hostSep = 0x00

// queueSuffixLen is the length of a queue key's suffix: level and sequence.
const queueSuffixLen = 1 + 8

// jobLen is the length of a job ID in a key.
const jobLen = 4

// heldSuffixLen is the length of a held key's suffix: job, level, sequence.
const heldSuffixLen = jobLen + queueSuffixLen

// Key is a decoded key. Only the fields of its Kind are set: Name for meta;
// Part and Host for every per-host kind; Level and Seq for queue and held
// items; URL for URL state and seen keys; Origin for robots, TDMRep and sitemaps;
// Job for seen, held, sitemaps, job and job counter keys; Part and Job for
// job partition counters.
type Key struct {
	Kind   Kind
	Name   string
	Part   partition.ID
	Host   string
	Job    uint32
	Level  uint8
	Seq    uint64
	URL    string
	Origin string
	// Due is a recrawl due key's time (whole seconds, UTC).
	Due time.Time
	// Digest is a digest key's SHA-256; Band and Fingerprint a near band
	// key's.
	Digest      [sha256.Size]byte
	Band        uint8
	Fingerprint uint64
}

// Encode returns the bytes of k. For per-host kinds, Part is recomputed from
// Host, so a Key built by hand need not set it.
func (k Key) Encode() []byte {
	switch k.Kind {
	case KindMeta:
		return MetaKey(k.Name)
	case KindHost:
		return HostKey(k.Host)
	case KindQueue:
		return QueueKey(k.Host, k.Level, k.Seq)
	case KindURL:
		return URLKey(k.Host, k.URL)
	case KindRobots:
		return RobotsKey(k.Host, k.Origin)
	case KindSeen:
		return SeenKey(k.Job, k.Host, k.URL)
	case KindHeld:
		return HeldKey(k.Host, k.Job, k.Level, k.Seq)
	case KindPolicy:
		return PolicyKey(k.Host)
	case KindJob:
		return JobKey(k.Job)
	case KindJobCounters:
		return JobCountersKey(k.Job)
	case KindJobTally:
		return JobTallyKey(k.Job)
	case KindJobPart:
		return JobPartKey(k.Part, k.Job)
	case KindDigest:
		return DigestKey(k.Digest)
	case KindNear:
		return NearKey(k.Fingerprint, int(k.Band))
	case KindDue:
		return DueKey(k.Due, k.Host, k.URL)
	case KindSitemap:
		return SitemapKey(k.Host, k.Job, k.Origin)
	case KindTDMRep:
		return TDMRepKey(k.Host, k.Origin)
	case KindOutbox:
		return OutboxKey(k.Part, k.Seq)
	}
	return []byte{byte(k.Kind)}
}

// appendHostPrefix appends kind, partition, host and the separator. host
// must not contain 0x00; canonical host names (urlnorm.HostKey) never do.
func appendHostPrefix(dst []byte, kind Kind, host string) []byte {
	p := partition.Of(host)
	dst = append(dst, byte(kind), byte(p>>8), byte(p))
	dst = append(dst, host...)
	return append(dst, hostSep)
}

// MetaKey returns the key of the crawl metadata item name.
func MetaKey(name string) []byte {
	return append([]byte{byte(KindMeta)}, name...)
}

// HostKey returns the key of host's politeness state. host is a politeness
// key (urlnorm.HostKey) and never contains 0x00.
func HostKey(host string) []byte {
	return appendHostPrefix(make([]byte, 0, 4+len(host)), KindHost, host)
}

// PolicyKey returns the key of host's operator policy (package
// hostpolicy).
func PolicyKey(host string) []byte {
	return appendHostPrefix(make([]byte, 0, 4+len(host)), KindPolicy, host)
}

// QueuePrefix returns the prefix shared by every queue item of host.
func QueuePrefix(host string) []byte {
	return appendHostPrefix(make([]byte, 0, 4+len(host)), KindQueue, host)
}

// QueueKey returns the key of host's queue item at priority level with
// sequence number seq.
func QueueKey(host string, level uint8, seq uint64) []byte {
	k := appendHostPrefix(make([]byte, 0, 4+len(host)+queueSuffixLen), KindQueue, host)
	k = append(k, level)
	return binary.BigEndian.AppendUint64(k, seq)
}

// URLKey returns the key of the per-URL state of url, a canonical URL whose
// politeness key is host.
func URLKey(host, url string) []byte {
	return AppendURLKey(make([]byte, 0, 5+len(host)+len(url)), host, url)
}

// AppendURLKey appends URLKey(host, url) to dst, for callers that reuse a
// buffer.
func AppendURLKey(dst []byte, host, url string) []byte {
	return AppendURL(appendHostPrefix(dst, KindURL, host), host, url)
}

// RobotsKey returns the key of the robots.txt copy of origin
// ("scheme://host:port") whose politeness key is host.
func RobotsKey(host, origin string) []byte {
	return append(appendHostPrefix(make([]byte, 0, 4+len(host)+len(origin)), KindRobots, host), origin...)
}

// TDMRepKey returns the key of the TDMRep file (/.well-known/tdmrep.json)
// of origin ("scheme://host:port") whose politeness key is host.
func TDMRepKey(host, origin string) []byte {
	return append(appendHostPrefix(make([]byte, 0, 4+len(host)+len(origin)), KindTDMRep, host), origin...)
}

// SeenKey returns the key that records that job has seen url, a canonical
// URL whose politeness key is host (the URL-seen gate is per job; the 'u'
// record of the URL is shared by every job).
func SeenKey(job uint32, host, url string) []byte {
	return AppendSeenKey(make([]byte, 0, 9+len(host)+len(url)), job, host, url)
}

// AppendSeenKey appends SeenKey(job, host, url) to dst, for callers that
// reuse a buffer.
func AppendSeenKey(dst []byte, job uint32, host, url string) []byte {
	dst = binary.BigEndian.AppendUint32(appendHostPrefix(dst, KindSeen, host), job)
	return AppendURL(dst, host, url)
}

// SitemapKey returns the key of job's progress through the sitemaps of
// origin ("scheme://host:port"), whose politeness key is host.
func SitemapKey(host string, job uint32, origin string) []byte {
	k := appendHostPrefix(make([]byte, 0, 4+len(host)+jobLen+len(origin)), KindSitemap, host)
	return append(binary.BigEndian.AppendUint32(k, job), origin...)
}

// HeldPrefix returns the prefix shared by every held item of host.
func HeldPrefix(host string) []byte {
	return appendHostPrefix(make([]byte, 0, 4+len(host)), KindHeld, host)
}

// HeldJobPrefix returns the prefix shared by every held item of host and
// job.
func HeldJobPrefix(host string, job uint32) []byte {
	return binary.BigEndian.AppendUint32(appendHostPrefix(make([]byte, 0, 4+len(host)+jobLen), KindHeld, host), job)
}

// HeldKey returns the key of host's queue item at priority level with
// sequence number seq, set aside while job is paused.
func HeldKey(host string, job uint32, level uint8, seq uint64) []byte {
	k := appendHostPrefix(make([]byte, 0, 4+len(host)+heldSuffixLen), KindHeld, host)
	k = binary.BigEndian.AppendUint32(k, job)
	k = append(k, level)
	return binary.BigEndian.AppendUint64(k, seq)
}

// JobKey returns the key of the definition of job id. Its value belongs to
// the node and is opaque to the store.
func JobKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{byte(KindJob)}, id)
}

// JobCountersKey returns the key of the frontier's counters of job id.
func JobCountersKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{byte(KindJobCounters)}, id)
}

// JobPartKey returns the key of the frontier's counters of job id over
// the items of partition part.
func JobPartKey(part partition.ID, id uint32) []byte {
	return binary.BigEndian.AppendUint32(PartitionPrefix(KindJobPart, part), id)
}

// JobTallyKey returns the key of job id's tally (job.Tally).
func JobTallyKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{byte(KindJobTally)}, id)
}

// DigestKey returns the key of the archived original of a payload whose
// SHA-256 is sum.
func DigestKey(sum [sha256.Size]byte) []byte {
	return append([]byte{byte(KindDigest)}, sum[:]...)
}

// NearKey returns the key of SimHash fingerprint fp under its band
// (0..simhash.NumBands-1): 'n' and simhash.BandKey.
func NearKey(fp uint64, band int) []byte {
	return simhash.BandKey([]byte{byte(KindNear)}, fp, band)
}

// NearPrefix returns the prefix of the near band keys of every stored
// fingerprint that shares fp's band.
func NearPrefix(fp uint64, band int) []byte {
	return NearKey(fp, band)[:1+simhash.BandPrefixLen]
}

// KeyRange is the keys from Start (inclusive) to End (exclusive).
type KeyRange struct{ Start, End []byte }

// FingerprintRanges returns the key ranges of the content fingerprints
// that belong to partition part (partition.OfFingerprint): one of digest
// keys, whose first two SHA-256 bytes are in part's range, then one of near
// band keys per band, whose band value is. A fleet shards the content-seen
// gate by these, and a partition's checkpoint carries them.
func FingerprintRanges(part partition.ID) []KeyRange {
	lo, hi := partition.FingerprintRange(part)
	rng := func(prefix []byte) KeyRange {
		start := binary.BigEndian.AppendUint16(slices.Clone(prefix), lo)
		if hi == 1<<16-1 {
			return KeyRange{start, PrefixEnd(prefix)}
		}
		return KeyRange{start, binary.BigEndian.AppendUint16(slices.Clone(prefix), hi+1)}
	}
	out := []KeyRange{rng([]byte{byte(KindDigest)})}
	for band := range simhash.NumBands {
		out = append(out, rng([]byte{byte(KindNear), byte(band)}))
	}
	return out
}

// FingerprintPartition returns the partition of a digest or near band key
// (partition.OfFingerprint of its first 16-bit value), and false for a key
// of another kind or too short.
func FingerprintPartition(key []byte) (partition.ID, bool) {
	switch {
	case len(key) >= 3 && Kind(key[0]) == KindDigest:
		return partition.OfFingerprint(binary.BigEndian.Uint16(key[1:])), true
	case len(key) >= 4 && Kind(key[0]) == KindNear:
		return partition.OfFingerprint(binary.BigEndian.Uint16(key[2:])), true
	}
	return 0, false
}

// dueLen is the length of a due key's time.
const dueLen = 8

// DueKey returns the key of the recrawl of url (a canonical URL whose
// politeness key is host) due at t, kept to the second: keys of one
// partition sort by due time. Times before 1970 are stored as 0.
func DueKey(t time.Time, host, url string) []byte {
	k := make([]byte, 0, 3+dueLen+len(host)+2+len(url))
	k = append(k, PartitionPrefix(KindDue, partition.Of(host))...)
	k = binary.BigEndian.AppendUint64(k, uint64(max(t.Unix(), 0)))
	k = append(append(k, host...), hostSep)
	return AppendURL(k, host, url)
}

// DueBefore returns the exclusive upper bound of partition part's recrawl
// due keys whose time is before t (whole seconds).
func DueBefore(part partition.ID, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(PartitionPrefix(KindDue, part), uint64(max(t.Unix(), 0)))
}

// OutboxKey returns the key of outbox entry seq for partition part.
func OutboxKey(part partition.ID, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(PartitionPrefix(KindOutbox, part), seq)
}

// ProgressKey returns the key of partition part's replication progress
// (value: package cluster/progress): where the partition's state stands in
// the fleet's log of its changes.
func ProgressKey(part partition.ID) []byte { return PartitionPrefix(KindProgress, part) }

// KindPrefix returns the prefix shared by every key of kind.
func KindPrefix(kind Kind) []byte { return []byte{byte(kind)} }

// PartitionPrefix returns the prefix shared by every key of a per-host kind
// in partition part, so that a partition can be scanned, copied or deleted
// as a unit.
func PartitionPrefix(kind Kind, part partition.ID) []byte {
	return []byte{byte(kind), byte(part >> 8), byte(part)}
}

// PrefixEnd returns the smallest key greater than every key with prefix,
// for use as an exclusive upper bound; nil means there is none.
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ErrMalformedKey is wrapped by every error of DecodeKey.
var ErrMalformedKey = errors.New("malformed key")

func malformed(key []byte, why string) error {
	return fmt.Errorf("store: decode key %q: %w: %s", key, ErrMalformedKey, why)
}

// DecodeKey decodes a key written by this package. It returns an error
// wrapping ErrMalformedKey for an unknown kind, a truncated key, a missing
// host separator, an empty host, a partition that is not the host's, or a
// suffix of the wrong length. For every key it accepts, Encode gives back the
// same bytes.
func DecodeKey(key []byte) (Key, error) {
	if len(key) == 0 {
		return Key{}, malformed(key, "empty")
	}
	k := Key{Kind: Kind(key[0])}
	switch k.Kind {
	case KindMeta:
		k.Name = string(key[1:])
		return k, nil
	case KindJob, KindJobCounters, KindJobTally:
		if len(key) != 1+jobLen {
			return Key{}, malformed(key, fmt.Sprintf("%s key of %d bytes, want %d", k.Kind, len(key), 1+jobLen))
		}
		k.Job = binary.BigEndian.Uint32(key[1:])
		return k, nil
	case KindDigest:
		if len(key) != 1+sha256.Size {
			return Key{}, malformed(key, fmt.Sprintf("digest key of %d bytes, want %d", len(key), 1+sha256.Size))
		}
		copy(k.Digest[:], key[1:])
		return k, nil
	case KindNear:
		if len(key) != 1+simhash.BandPrefixLen+8 {
			return Key{}, malformed(key, fmt.Sprintf("near band key of %d bytes, want %d", len(key), 1+simhash.BandPrefixLen+8))
		}
		k.Band, k.Fingerprint = key[1], binary.BigEndian.Uint64(key[1+simhash.BandPrefixLen:])
		if int(k.Band) >= simhash.NumBands || binary.BigEndian.Uint16(key[2:]) != simhash.Band(k.Fingerprint, int(k.Band)) {
			return Key{}, malformed(key, "near band key whose band is not its fingerprint's")
		}
		return k, nil
	case KindDue:
		return decodeDueKey(key)
	case KindJobPart:
		if len(key) != 3+jobLen {
			return Key{}, malformed(key, fmt.Sprintf("job partition counters key of %d bytes, want %d", len(key), 3+jobLen))
		}
		k.Part = partition.ID(binary.BigEndian.Uint16(key[1:3]))
		if k.Part >= partition.Count {
			return Key{}, malformed(key, fmt.Sprintf("partition %d out of range", k.Part))
		}
		k.Job = binary.BigEndian.Uint32(key[3:])
		return k, nil
	case KindProgress:
		if len(key) != 3 {
			return Key{}, malformed(key, fmt.Sprintf("progress key of %d bytes, want 3", len(key)))
		}
		k.Part = partition.ID(binary.BigEndian.Uint16(key[1:3]))
		if k.Part >= partition.Count {
			return Key{}, malformed(key, fmt.Sprintf("partition %d out of range", k.Part))
		}
		return k, nil
	case KindOutbox:
		if len(key) != 3+8 {
			return Key{}, malformed(key, fmt.Sprintf("outbox key of %d bytes, want %d", len(key), 3+8))
		}
		k.Part = partition.ID(binary.BigEndian.Uint16(key[1:3]))
		k.Seq = binary.BigEndian.Uint64(key[3:])
		return k, nil
	}
	if !k.Kind.perHost() {
		return Key{}, malformed(key, "unknown kind")
	}
	if len(key) < 3 {
		return Key{}, malformed(key, "no partition")
	}
	k.Part = partition.ID(binary.BigEndian.Uint16(key[1:3]))
	rest := key[3:]
	i := strings.IndexByte(string(rest), hostSep)
	if i < 0 {
		return Key{}, malformed(key, "no host separator")
	}
	if i == 0 {
		return Key{}, malformed(key, "empty host")
	}
	k.Host = string(rest[:i])
	if partition.Of(k.Host) != k.Part {
		return Key{}, malformed(key, fmt.Sprintf("partition %d is not host %q's (%d)", k.Part, k.Host, partition.Of(k.Host)))
	}
	suffix := rest[i+1:]
	switch k.Kind {
	case KindHost, KindPolicy:
		if len(suffix) != 0 {
			return Key{}, malformed(key, k.Kind.String()+" key with a suffix")
		}
	case KindQueue:
		if len(suffix) != queueSuffixLen {
			return Key{}, malformed(key, fmt.Sprintf("queue suffix of %d bytes, want %d", len(suffix), queueSuffixLen))
		}
		k.Level = suffix[0]
		k.Seq = binary.BigEndian.Uint64(suffix[1:])
	case KindURL:
		var err error
		if k.URL, err = ExpandURL(k.Host, suffix); err != nil {
			return Key{}, malformed(key, err.Error())
		}
	case KindRobots, KindTDMRep:
		k.Origin = string(suffix)
	case KindSeen:
		if len(suffix) < jobLen {
			return Key{}, malformed(key, "seen key without a job")
		}
		k.Job = binary.BigEndian.Uint32(suffix)
		var err error
		if k.URL, err = ExpandURL(k.Host, suffix[jobLen:]); err != nil {
			return Key{}, malformed(key, err.Error())
		}
	case KindSitemap:
		if len(suffix) < jobLen {
			return Key{}, malformed(key, "sitemaps key without a job")
		}
		k.Job = binary.BigEndian.Uint32(suffix)
		k.Origin = string(suffix[jobLen:])
	case KindHeld:
		if len(suffix) != heldSuffixLen {
			return Key{}, malformed(key, fmt.Sprintf("held suffix of %d bytes, want %d", len(suffix), heldSuffixLen))
		}
		k.Job = binary.BigEndian.Uint32(suffix)
		k.Level = suffix[jobLen]
		k.Seq = binary.BigEndian.Uint64(suffix[jobLen+1:])
	}
	return k, nil
}

func decodeDueKey(key []byte) (Key, error) {
	k := Key{Kind: KindDue}
	if len(key) < 3+dueLen {
		return Key{}, malformed(key, "recrawl due key without a time")
	}
	k.Part = partition.ID(binary.BigEndian.Uint16(key[1:3]))
	s := binary.BigEndian.Uint64(key[3:])
	if s > math.MaxInt64 {
		return Key{}, malformed(key, "recrawl due time out of range")
	}
	k.Due = time.Unix(int64(s), 0).UTC()
	rest := key[3+dueLen:]
	i := strings.IndexByte(string(rest), hostSep)
	if i <= 0 {
		return Key{}, malformed(key, "recrawl due key without a host")
	}
	k.Host = string(rest[:i])
	if partition.Of(k.Host) != k.Part {
		return Key{}, malformed(key, fmt.Sprintf("partition %d is not host %q's (%d)", k.Part, k.Host, partition.Of(k.Host)))
	}
	var err error
	if k.URL, err = ExpandURL(k.Host, rest[i+1:]); err != nil {
		return Key{}, malformed(key, err.Error())
	}
	return k, nil
}

// DecodeQueueKey decodes a queue item key.
func DecodeQueueKey(key []byte) (host string, level uint8, seq uint64, err error) {
	k, err := DecodeKey(key)
	if err == nil && k.Kind != KindQueue {
		err = malformed(key, "not a queue key")
	}
	if err != nil {
		return "", 0, 0, err
	}
	return k.Host, k.Level, k.Seq, nil
}

// SameQueueHost reports whether next is a queue key of the same partition
// and host as first, a queue key already decoded, and if so returns next's
// level and seq: for a scan over many queue keys of one host, without
// decoding the host again (its bytes are compared with first's, separator
// included).
func SameQueueHost(first, next []byte) (level uint8, seq uint64, ok bool) {
	n := len(first) - queueSuffixLen
	if n < 1 || len(next) != len(first) || !bytes.Equal(next[:n], first[:n]) {
		return 0, 0, false
	}
	return next[n], binary.BigEndian.Uint64(next[n+1:]), true
}

// DecodeURLKey decodes a URL state key into the host and the canonical URL.
func DecodeURLKey(key []byte) (host, url string, err error) {
	k, err := DecodeKey(key)
	if err == nil && k.Kind != KindURL {
		err = malformed(key, "not a URL key")
	}
	if err != nil {
		return "", "", err
	}
	return k.Host, k.URL, nil
}
