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

// TestNotModifiedRevisit: a 304 to a recrawl's conditional GET is a
// revisit record with the server-not-modified profile (WARC 1.1 section
// 6.7.3): the 304's status line and headers as the block, no payload
// digest, and the earlier capture's URI, date and record ID as far as
// they are known. warcio and gowarc read the file, and the CDXJ capture
// the writer reports is a revisit with status 304 and no digest.
func TestNotModifiedRevisit(t *testing.T) {
	var caps []Capture
	w := newTestWriter(t, Options{OnFinish: func(_ string, c []Capture) { caps = append(caps, c...) }})
	body := []byte("<html><body>a page recrawled</body></html>")
	orig := exchange("http://a.test/page", 200, "Content-Type: text/html\r\nETag: \"v1\"\r\n", body)
	loc, err := w.Write(orig)
	if err != nil {
		t.Fatal(err)
	}
	head304 := []byte("HTTP/1.1 304 Not Modified\r\nDate: Mon, 06 May 2024 08:08:09 GMT\r\nEtag: \"v1\"\r\n\r\n")
	for _, rv := range []Revisit{
		{Profile: ProfileServerNotModified, TargetURI: orig.URL, Date: orig.Date, RecordID: loc.RecordID}, // original known
		{Profile: ProfileServerNotModified}, // original unknown
	} {
		ex := exchange(orig.URL, 304, "", nil)
		ex.ResponseHeader = head304
		ex.Date = testTime.Add(time.Hour)
		ex.Revisit = &rv
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := validate(t, w.Files()...)
	if rep.ByType["revisit"] != 2 || rep.ByType["response"] != 1 {
		t.Errorf("warcio counts %v, want one response and two revisits", rep.ByType)
	}
	for _, r := range rep.Revisits {
		if r.Status != 304 || r.Profile != ProfileServerNotModified || r.PayloadDigest != "" {
			t.Errorf("warcio read revisit %+v, want status 304, profile server-not-modified, no payload digest", r)
		}
	}
	var revs []readRecord
	for _, r := range readBack(t, w.Files()[0]) {
		if r.typ == "revisit" {
			revs = append(revs, r)
		}
	}
	if len(revs) != 2 {
		t.Fatalf("gowarc read %d revisits, want 2", len(revs))
	}
	for i, want := range []map[string]string{
		{gowarc.WarcRefersToTargetURI: orig.URL, gowarc.WarcRefersToDate: testTime.UTC().Format(dateFormat), gowarc.WarcRefersTo: loc.RecordID},
		{gowarc.WarcRefersToTargetURI: "", gowarc.WarcRefersToDate: "", gowarc.WarcRefersTo: ""},
	} {
		h := revs[i].headers
		want[gowarc.WarcProfile] = ProfileServerNotModified
		want[gowarc.WarcPayloadDigest] = ""
		want[gowarc.WarcTargetURI] = orig.URL
		want[gowarc.ContentType] = "application/http;msgtype=response"
		for name, v := range want {
			if got := h.Get(name); got != v {
				t.Errorf("revisit %d: %s = %q, want %q", i, name, got, v)
			}
		}
		if string(revs[i].block) != string(head304) {
			t.Errorf("revisit %d: block %q, want the 304's head %q", i, revs[i].block, head304)
		}
	}
	if len(caps) != 3 {
		t.Fatalf("OnFinish reported %d captures, want 3", len(caps))
	}
	for _, c := range caps[1:] {
		if c.Type != "revisit" || c.HTTP == nil || c.HTTP.Status != 304 || c.PayloadDigest != "" {
			t.Errorf("capture %+v, want a revisit with status 304 and no digest", c)
		}
	}
}
