package warc

import (
	"regexp"
	"testing"
)

// TestRecordIDs: record IDs are version 4 (random) UUID URNs in angle
// brackets, RFC 9562 section 5.4: the version nibble 4, the variant bits
// 10, lower-case hex in 8-4-4-4-12 groups; and they differ.
func TestRecordIDs(t *testing.T) {
	re := regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	seen := map[string]bool{}
	for range 1000 {
		id := newRecordID()
		if !re.MatchString(id) {
			t.Fatalf("record ID %q is no version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("record ID %q drawn twice", id)
		}
		seen[id] = true
	}
}
