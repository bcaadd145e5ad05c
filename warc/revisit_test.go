package warc

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/nlnwa/gowarc/v3"
)

func okRevisit() *Revisit {
	return &Revisit{TargetURI: "http://a.test/original", Date: testTime, RecordID: "<urn:uuid:6fd3c4c3-6f3a-4d3b-9a53-7d2c1e0c3f11>"}
}

// TestRevisitRecord: a revisit of an archived response carries the
// response's HTTP headers and no payload, the original's payload digest,
// the identical-payload-digest profile and the original's URI, date and
// record ID; warcio and gowarc read the file, and the response it refers
// to has that digest.
func TestRevisitRecord(t *testing.T) {
	w := newTestWriter(t, Options{})
	body := []byte("<html><body>the same page twice</body></html>")
	sum := sha256.Sum256(body)
	orig := exchange("http://a.test/original", 200, "Content-Type: text/html\r\n", body)
	orig.PayloadSHA256 = sum[:]
	loc, err := w.Write(orig)
	if err != nil {
		t.Fatal(err)
	}
	if loc.RecordID == "" {
		t.Fatal("Write returned no record ID")
	}
	dup := exchange("http://a.test/copy", 200, "Content-Type: text/html\r\n", body)
	dup.Date = testTime.Add(time.Minute)
	dup.PayloadSHA256 = sum[:]
	dup.Revisit = &Revisit{TargetURI: orig.URL, Date: orig.Date, RecordID: loc.RecordID}
	rloc, err := w.Write(dup)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := validate(t, w.Files()...)
	if rep.ByType["revisit"] != 1 || rep.ByType["response"] != 1 {
		t.Errorf("warcio counts %v, want one response and one revisit", rep.ByType)
	}
	recs := readBack(t, w.Files()[0])
	var resp, rev *readRecord
	for i := range recs {
		switch recs[i].typ {
		case "response":
			resp = &recs[i]
		case "revisit":
			rev = &recs[i]
		}
	}
	if resp == nil || rev == nil {
		t.Fatalf("read back %d records without a response and a revisit", len(recs))
	}
	h := rev.headers
	for name, want := range map[string]string{
		gowarc.WarcProfile:           ProfileIdenticalPayload,
		gowarc.WarcRefersToTargetURI: orig.URL,
		gowarc.WarcRefersToDate:      testTime.UTC().Format(dateFormat), // as the original's WARC-Date was written
		gowarc.WarcRefersTo:          loc.RecordID,
		gowarc.WarcPayloadDigest:     resp.headers.Get(gowarc.WarcPayloadDigest),
		gowarc.WarcTargetURI:         dup.URL,
		gowarc.WarcRecordID:          rloc.RecordID,
		gowarc.ContentType:           "application/http;msgtype=response",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("revisit %s = %q, want %q", name, got, want)
		}
	}
	if string(rev.block) != string(dup.ResponseHeader) {
		t.Errorf("revisit block %q, want the HTTP headers only %q", rev.block, dup.ResponseHeader)
	}
	if resp.headers.Get(gowarc.WarcPayloadDigest) != digestOf(sum[:]) {
		t.Errorf("the original's payload digest %q is not the body's", resp.headers.Get(gowarc.WarcPayloadDigest))
	}
}
