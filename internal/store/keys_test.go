package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
)

func TestKeyEncoding(t *testing.T) {
	// a.test is in partition 14 (partition's golden values): 0x00 0x0e.
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"MetaKey", MetaKey("version"), "mversion"},
		{"HostKey", HostKey("a.test"), "h\x00\x0ea.test\x00"},
		{"QueuePrefix", QueuePrefix("a.test"), "q\x00\x0ea.test\x00"},
		{"QueueKey", QueueKey("a.test", 2, 0x0102030405060708), "q\x00\x0ea.test\x00\x02\x01\x02\x03\x04\x05\x06\x07\x08"},
		{"URLKey", URLKey("a.test", "http://a.test/x"), "u\x00\x0ea.test\x00\x01/x"},
		{"URLKey https", URLKey("a.test", "https://a.test:8443"), "u\x00\x0ea.test\x00\x02:8443"},
		{"URLKey other host", URLKey("a.test", "http://a.testing/"), "u\x00\x0ea.test\x00\x00http://a.testing/"},
		{"URLKey other scheme", URLKey("a.test", "ftp://a.test/"), "u\x00\x0ea.test\x00\x00ftp://a.test/"},
		{"AppendURLKey", AppendURLKey([]byte("pre"), "a.test", "http://a.test/"), "preu\x00\x0ea.test\x00\x01/"},
		{"RobotsKey", RobotsKey("a.test", "https://a.test:443"), "r\x00\x0ea.test\x00https://a.test:443"},
		{"TDMRepKey", TDMRepKey("a.test", "https://a.test:443"), "f\x00\x0ea.test\x00https://a.test:443"},
		{"SeenKey", SeenKey(0x01020304, "a.test", "http://a.test/x"), "s\x00\x0ea.test\x00\x01\x02\x03\x04\x01/x"},
		{"AppendSeenKey", AppendSeenKey([]byte("pre"), 7, "a.test", "ftp://a.test/"), "pres\x00\x0ea.test\x00\x00\x00\x00\x07\x00ftp://a.test/"},
		{"HeldKey", HeldKey("a.test", 9, 2, 0x0102030405060708), "p\x00\x0ea.test\x00\x00\x00\x00\x09\x02\x01\x02\x03\x04\x05\x06\x07\x08"},
		{"HeldPrefix", HeldPrefix("a.test"), "p\x00\x0ea.test\x00"},
		{"PolicyKey", PolicyKey("a.test"), "o\x00\x0ea.test\x00"},
		{"SitemapKey", SitemapKey("a.test", 0x01020304, "http://a.test:80"), "e\x00\x0ea.test\x00\x01\x02\x03\x04http://a.test:80"},
		{"HeldJobPrefix", HeldJobPrefix("a.test", 9), "p\x00\x0ea.test\x00\x00\x00\x00\x09"},
		{"JobKey", JobKey(0x01020304), "j\x01\x02\x03\x04"},
		{"JobCountersKey", JobCountersKey(5), "c\x00\x00\x00\x05"},
		{"JobTallyKey", JobTallyKey(5), "t\x00\x00\x00\x05"},
		{"JobPartKey", JobPartKey(0x0102, 5), "k\x01\x02\x00\x00\x00\x05"},
		{"NearKey", NearKey(0x1122_3344_5566_7788, 1), "n\x01\x55\x66\x11\x22\x33\x44\x55\x66\x77\x88"},
		{"NearPrefix", NearPrefix(0x1122_3344_5566_7788, 3), "n\x03\x11\x22"},
		{"DueKey", DueKey(time.Unix(0x01020304, 0), "a.test", "http://a.test/x"), "w\x00\x0e\x00\x00\x00\x00\x01\x02\x03\x04a.test\x00\x01/x"},
		{"DueKey before 1970", DueKey(time.Unix(-5, 0), "a.test", "http://a.test/"), "w\x00\x0e\x00\x00\x00\x00\x00\x00\x00\x00a.test\x00\x01/"},
		{"DueBefore", DueBefore(14, time.Unix(0x0102, 0)), "w\x00\x0e\x00\x00\x00\x00\x00\x00\x01\x02"},
		{"PartitionPrefix", PartitionPrefix(KindURL, 14), "u\x00\x0e"},
		{"PartitionPrefix high", PartitionPrefix(KindQueue, 255), "q\x00\xff"},
		{"PrefixEnd", PrefixEnd([]byte("u\x00\xff")), "u\x01"},
		{"PrefixEnd all ff", PrefixEnd([]byte("\xff\xff")), ""},
	}
	for _, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestDecodeKey(t *testing.T) {
	good := []Key{
		{Kind: KindMeta, Name: "version"},
		{Kind: KindMeta},
		{Kind: KindHost, Host: "a.test"},
		{Kind: KindQueue, Host: "www.bbc.co.uk", Level: 7, Seq: 1 << 60},
		{Kind: KindURL, Host: "[::1]", URL: "http://[::1]:8080/a?b=c\x00d"},
		{Kind: KindURL, Host: "a.test"},
		{Kind: KindURL, Host: "a.test", URL: "https://a.test"},
		{Kind: KindURL, Host: "a.test", URL: "http://a.test:81/?q#f"},
		{Kind: KindURL, Host: "a.test", URL: "http://b.test/"},
		{Kind: KindRobots, Host: "a.test", Origin: "http://a.test:80"},
		{Kind: KindTDMRep, Host: "a.test", Origin: "https://a.test:8443"},
		{Kind: KindSeen, Host: "a.test", Job: 7, URL: "http://a.test/x"},
		{Kind: KindSeen, Host: "a.test", Job: 1 << 31, URL: "http://b.test/"},
		{Kind: KindHeld, Host: "a.test", Job: 3, Level: 2, Seq: 1 << 40},
		{Kind: KindPolicy, Host: "a.test"},
		{Kind: KindSitemap, Host: "a.test", Job: 7, Origin: "https://a.test:8443"},
		{Kind: KindSitemap, Host: "a.test", Job: 1<<32 - 1},
		{Kind: KindJob, Job: 42},
		{Kind: KindJob},
		{Kind: KindJobCounters, Job: 1<<32 - 1},
		{Kind: KindJobTally, Job: 3},
		{Kind: KindJobPart, Part: 255, Job: 1<<32 - 1},
		{Kind: KindJobPart},
		{Kind: KindDigest, Digest: [32]byte{1, 2, 3, 31: 9}},
		{Kind: KindNear, Band: 2, Fingerprint: 0x0123_4567_89ab_cdef},
		{Kind: KindNear, Band: 3, Fingerprint: 0},
		{Kind: KindDue, Host: "a.test", Due: time.Unix(1_800_000_000, 0).UTC(), URL: "http://a.test/x?y"},
		{Kind: KindDue, Host: "b.test", Due: time.Unix(0, 0).UTC(), URL: "https://c.test/"},
		{Kind: KindOutbox, Part: 255, Seq: 1 << 50},
		{Kind: KindOutbox},
	}
	for _, k := range good {
		if k.Kind.perHost() || k.Kind == KindDue {
			k.Part = partition.Of(k.Host)
		}
		enc := k.Encode()
		got, err := DecodeKey(enc)
		if err != nil || got != k {
			t.Errorf("DecodeKey(%q) = %+v, %v; want %+v", enc, got, err, k)
		}
		if !bytes.HasPrefix(enc, KindPrefix(k.Kind)) {
			t.Errorf("key %q lacks kind prefix %q", enc, KindPrefix(k.Kind))
		}
		if k.Kind.perHost() && !bytes.HasPrefix(enc, PartitionPrefix(k.Kind, k.Part)) {
			t.Errorf("key %q lacks partition prefix %q", enc, PartitionPrefix(k.Kind, k.Part))
		}
	}
	bad := []struct{ name, key string }{
		{"empty", ""},
		{"short outbox key", "x\x00\x01\x00"},
		{"unknown kind", "zabc"},
		{"short partition", "h\x00"},
		{"no separator", "h\x00\x0ea.test"},
		{"empty host", "h\x00\x0e\x00"},
		{"wrong partition", "h\x00\x0fa.test\x00"},
		{"host with suffix", "h\x00\x0ea.test\x00x"},
		{"short queue suffix", "q\x00\x0ea.test\x00\x01\x02"},
		{"long queue suffix", "q\x00\x0ea.test\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"},
		{"URL key without form tag", "u\x00\x0ea.test\x00"},
		{"sitemaps key without a job", "e\x00\x0ea.test\x00\x00\x01"},
		{"sitemaps key in another partition", "e\x00\x0fa.test\x00\x00\x00\x00\x01http://a.test:80"},
		{"URL key with unknown tag", "u\x00\x0ea.test\x00\x07/x"},
		{"URL verbatim that has a short form", "u\x00\x0ea.test\x00\x00http://a.test/x"},
		{"short URL form joining the host", "u\x00\x0ea.test\x00\x01ing/"},
		{"seen key without a job", "s\x00\x0ea.test\x00\x00\x00"},
		{"seen key without a URL", "s\x00\x0ea.test\x00\x00\x00\x00\x01"},
		{"seen key with a long form", "s\x00\x0ea.test\x00\x00\x00\x00\x01\x00http://a.test/"},
		{"policy with suffix", "o\x00\x0ea.test\x00x"},
		{"short held suffix", "p\x00\x0ea.test\x00\x00\x00\x00\x01\x02\x01"},
		{"job key short", "j\x00\x01"},
		{"job key long", "j\x00\x00\x00\x01\x00"},
		{"job counters key short", "c"},
		{"digest key short", "d\x01\x02"},
		{"near key short", "n\x00\x00\x00"},
		{"near key band 4", "n\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
		{"near key band value not the fingerprint's", "n\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"},
		{"due key without a time", "w\x00\x0e\x00\x00"},
		{"due key without a host", "w\x00\x0e\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01/"},
		{"due key in another partition", "w\x00\x0f\x00\x00\x00\x00\x00\x00\x00\x01a.test\x00\x01/"},
		{"due key time out of range", "w\x00\x0e\x80\x00\x00\x00\x00\x00\x00\x01a.test\x00\x01/"},
		{"due key with a long URL form", "w\x00\x0e\x00\x00\x00\x00\x00\x00\x00\x01a.test\x00\x00http://a.test/"},
	}
	for _, c := range bad {
		if k, err := DecodeKey([]byte(c.key)); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("DecodeKey(%q) [%s] = %+v, %v; want ErrMalformedKey", c.key, c.name, k, err)
		}
	}
	if _, _, _, err := DecodeQueueKey(HostKey("a.test")); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("DecodeQueueKey(host key) err = %v, want ErrMalformedKey", err)
	}
	if h, l, s, err := DecodeQueueKey(QueueKey("a.test", 3, 9)); h != "a.test" || l != 3 || s != 9 || err != nil {
		t.Errorf("DecodeQueueKey(QueueKey(a.test, 3, 9)) = %q, %d, %d, %v", h, l, s, err)
	}
	if _, _, err := DecodeURLKey(QueueKey("a.test", 3, 9)); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("DecodeURLKey(queue key) err = %v, want ErrMalformedKey", err)
	}
	if h, u, err := DecodeURLKey(URLKey("a.test", "http://a.test/")); h != "a.test" || u != "http://a.test/" || err != nil {
		t.Errorf("DecodeURLKey(URLKey(a.test, http://a.test/)) = %q, %q, %v", h, u, err)
	}
}

// TestQueueKeyOrder checks that a host's queue keys sort by level, then seq.
func TestQueueKeyOrder(t *testing.T) {
	seq := [][]byte{
		QueueKey("a.test", 0, 0), QueueKey("a.test", 0, 1), QueueKey("a.test", 0, 256),
		QueueKey("a.test", 0, 1<<63), QueueKey("a.test", 1, 0), QueueKey("a.test", 255, 0),
	}
	for i := 1; i < len(seq); i++ {
		if bytes.Compare(seq[i-1], seq[i]) >= 0 {
			t.Errorf("QueueKey order: %q >= %q", seq[i-1], seq[i])
		}
		if !bytes.HasPrefix(seq[i], QueuePrefix("a.test")) {
			t.Errorf("QueueKey %q lacks QueuePrefix", seq[i])
		}
	}
}

// FuzzDecodeKey: no panic; a key that decodes encodes back to itself; and
// a key encoded from decoded parts decodes to them.
func FuzzDecodeKey(f *testing.F) {
	f.Add([]byte("mversion"))
	f.Add(HostKey("a.test"))
	f.Add(QueueKey("a.test", 1, 2))
	f.Add(URLKey("a.test", "http://a.test/"))
	f.Add(RobotsKey("a.test", "http://a.test:80"))
	f.Add(SeenKey(3, "a.test", "http://a.test/x"))
	f.Add(HeldKey("a.test", 3, 1, 9))
	f.Add(JobKey(3))
	f.Add(JobCountersKey(3))
	f.Add(JobPartKey(7, 3))
	f.Add([]byte("q\x00\x0ea.test\x00"))
	f.Add(DueKey(time.Unix(1_800_000_000, 0), "a.test", "http://a.test/"))
	f.Fuzz(func(t *testing.T, key []byte) {
		k, err := DecodeKey(key)
		if err != nil {
			if !errors.Is(err, ErrMalformedKey) {
				t.Fatalf("DecodeKey(%q) error %v does not wrap ErrMalformedKey", key, err)
			}
			return
		}
		if enc := k.Encode(); !bytes.Equal(enc, key) {
			t.Fatalf("Encode(DecodeKey(%q)) = %q, want the input", key, enc)
		}
		k2, err := DecodeKey(k.Encode())
		if err != nil || k2 != k {
			t.Fatalf("DecodeKey(Encode(%+v)) = %+v, %v", k, k2, err)
		}
	})
}

// TestFingerprintRanges: every digest and near band key lies in exactly
// the ranges of its own partition (FingerprintPartition), at the edges of
// partitions too.
func TestFingerprintRanges(t *testing.T) {
	in := func(k []byte, r KeyRange) bool {
		return bytes.Compare(k, r.Start) >= 0 && (r.End == nil || bytes.Compare(k, r.End) < 0)
	}
	var keys [][]byte
	for _, v := range []uint16{0, 0x00ff, 0x0100, 0x7fff, 0x8000, 0xabcd, 0xff00, 0xffff} {
		var sum [sha256.Size]byte
		binary.BigEndian.PutUint16(sum[:], v)
		for _, last := range []byte{0, 0xff} {
			sum[31] = last
			keys = append(keys, DigestKey(sum))
		}
		for band := range simhash.NumBands {
			for _, other := range []uint64{0, ^uint64(0)} {
				fp := other&^(0xffff<<(16*band)) | uint64(v)<<(16*band)
				keys = append(keys, NearKey(fp, band))
			}
		}
	}
	for _, k := range keys {
		p, ok := FingerprintPartition(k)
		if !ok {
			t.Fatalf("FingerprintPartition(%x): not a fingerprint key", k)
		}
		for q := range partition.Count {
			n := 0
			for _, r := range FingerprintRanges(partition.ID(q)) {
				if in(k, r) {
					n++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[partition.ID(q) == p]; n != want {
				t.Errorf("key %x (partition %d) is in %d ranges of partition %d, want %d", k, p, n, q, want)
			}
		}
	}
	if _, ok := FingerprintPartition(HostKey("a.test")); ok {
		t.Error("FingerprintPartition of a host key: ok")
	}
}

// TestSameQueueHost: a queue key of the same host is read without
// decoding; any other key is not taken for one.
func TestSameQueueHost(t *testing.T) {
	first := QueueKey("a.test", 1, 5)
	for _, tc := range []struct {
		name  string
		next  []byte
		level uint8
		seq   uint64
		ok    bool
	}{
		{"same host, other level and seq", QueueKey("a.test", 2, 1<<40+9), 2, 1<<40 + 9, true},
		{"same key", QueueKey("a.test", 1, 5), 1, 5, true},
		{"other host, same length", QueueKey("b.test", 1, 6), 0, 0, false},
		{"host one letter longer", QueueKey("a.testx", 1, 6), 0, 0, false},
		{"host a prefix", QueueKey("a.tes", 1, 6), 0, 0, false},
		{"host record", HostKey("a.test"), 0, 0, false},
		{"held key", HeldKey("a.test", 0, 1, 6), 0, 0, false},
		{"empty", nil, 0, 0, false},
	} {
		level, seq, ok := SameQueueHost(first, tc.next)
		if level != tc.level || seq != tc.seq || ok != tc.ok {
			t.Errorf("%s: SameQueueHost = %d, %d, %v; want %d, %d, %v", tc.name, level, seq, ok, tc.level, tc.seq, tc.ok)
		}
		if ok {
			host, l, s, err := DecodeQueueKey(tc.next)
			if err != nil || host != "a.test" || l != level || s != seq {
				t.Errorf("%s: DecodeQueueKey = %q, %d, %d, %v; SameQueueHost disagrees", tc.name, host, l, s, err)
			}
		}
	}
	if _, _, ok := SameQueueHost(nil, QueueKey("a.test", 1, 5)); ok {
		t.Errorf("SameQueueHost(nil first) = ok")
	}
}
