package warccheck

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// rec is a WARC record written by hand, independently of package warc.
type rec struct {
	typ, uri, id, infoID, concurrent string
	block                            string
	payloadAt                        int    // offset of the payload in block; -1 for none
	blockDigest, payloadDigest       string // "" computes sha1; "-" leaves the field out
	sha256                           bool
}

func sha1B32(s string) string {
	h := sha1.Sum([]byte(s))
	return "sha1:" + base32.StdEncoding.EncodeToString(h[:])
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

func (r rec) bytes() []byte {
	digest := sha1B32
	if r.sha256 {
		digest = sha256Hex
	}
	var b strings.Builder
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: %s\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n", r.typ, r.id)
	if r.uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", r.uri)
	}
	if r.infoID != "" {
		fmt.Fprintf(&b, "WARC-Warcinfo-ID: %s\r\n", r.infoID)
	}
	if r.concurrent != "" {
		fmt.Fprintf(&b, "WARC-Concurrent-To: %s\r\n", r.concurrent)
	}
	switch r.typ {
	case "warcinfo":
		b.WriteString("Content-Type: application/warc-fields\r\n")
	default:
		fmt.Fprintf(&b, "Content-Type: application/http;msgtype=%s\r\n", r.typ)
	}
	switch r.blockDigest {
	case "":
		fmt.Fprintf(&b, "WARC-Block-Digest: %s\r\n", digest(r.block))
	case "-":
	default:
		fmt.Fprintf(&b, "WARC-Block-Digest: %s\r\n", r.blockDigest)
	}
	if r.payloadAt >= 0 {
		switch r.payloadDigest {
		case "":
			fmt.Fprintf(&b, "WARC-Payload-Digest: %s\r\n", digest(r.block[r.payloadAt:]))
		case "-":
		default:
			fmt.Fprintf(&b, "WARC-Payload-Digest: %s\r\n", r.payloadDigest)
		}
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s\r\n\r\n", len(r.block), r.block)
	return []byte(b.String())
}

func member(t *testing.T, data ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for _, d := range data {
		if _, err := zw.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	infoID = "<urn:uuid:00000000-0000-4000-8000-000000000001>"
	respID = "<urn:uuid:00000000-0000-4000-8000-000000000002>"
	reqID  = "<urn:uuid:00000000-0000-4000-8000-000000000003>"
	respHd = "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\n"
	reqHd  = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
)

func goodRecords() []rec {
	return []rec{
		{typ: "warcinfo", id: infoID, block: "software: test\r\n", payloadAt: -1},
		{typ: "response", id: respID, uri: "http://a.test/", infoID: infoID, concurrent: reqID, block: respHd + "hello", payloadAt: len(respHd)},
		{typ: "request", id: reqID, uri: "http://a.test/", infoID: infoID, concurrent: respID, block: reqHd, payloadAt: len(reqHd)},
	}
}

// writeFile writes recs, one gzip member each unless joined, and returns the path.
func writeFile(t *testing.T, recs []rec, joined bool) string {
	t.Helper()
	var data []byte
	if joined {
		var parts [][]byte
		for _, r := range recs {
			parts = append(parts, r.bytes())
		}
		data = member(t, parts...)
	} else {
		for _, r := range recs {
			data = append(data, member(t, r.bytes())...)
		}
	}
	path := filepath.Join(t.TempDir(), "test.warc.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateGood(t *testing.T) {
	for _, sha256 := range []bool{false, true} {
		recs := goodRecords()
		for i := range recs {
			recs[i].sha256 = sha256
		}
		path := writeFile(t, recs, false)
		r, err := Validate(path)
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if len(r.Errors) != 0 {
			t.Errorf("sha256=%v: errors %q, want none", sha256, r.Errors)
		}
		want := Response{URI: "http://a.test/", Status: 404, File: path, Offset: int64(len(member(t, recs[0].bytes())))}
		if r.Files != 1 || r.Records != 3 || r.ByType["warcinfo"] != 1 || r.ByType["response"] != 1 || r.ByType["request"] != 1 ||
			len(r.Responses) != 1 || r.Responses[0].URI != want.URI || r.Responses[0].Status != want.Status ||
			r.Responses[0].File != want.File || r.Responses[0].Offset != want.Offset {
			t.Errorf("sha256=%v: report %+v, want 3 records and response %+v", sha256, r, want)
		}
	}
}

// TestValidateFindsErrors: each broken file yields an error that says why,
// so that a clean report from the validator means something.
func TestValidateFindsErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func([]rec) []rec
		joined bool
		want   string
	}{
		{"wrong block digest", func(r []rec) []rec { r[1].blockDigest = sha1B32("other"); return r }, false, "WARC-Block-Digest"},
		{"wrong payload digest", func(r []rec) []rec { r[1].payloadDigest = sha1B32("other"); return r }, false, "WARC-Payload-Digest"},
		{"missing payload digest", func(r []rec) []rec { r[2].payloadDigest = "-"; return r }, false, "missing WARC-Payload-Digest"},
		{"garbled digest", func(r []rec) []rec { r[1].blockDigest = "sha1:nonsense"; return r }, false, "not sha1"},
		{"no warcinfo first", func(r []rec) []rec { return r[1:] }, false, "first record is not warcinfo"},
		{"one gzip member for all", func(r []rec) []rec { return r }, true, "one gzip member per record"},
		{"dangling concurrent-to", func(r []rec) []rec { r[1].concurrent = "<urn:uuid:x>"; return r }, false, "names no record"},
		{"duplicate id", func(r []rec) []rec { r[2].id = respID; return r }, false, "duplicate WARC-Record-ID"},
		{"missing target URI", func(r []rec) []rec { r[1].uri = ""; return r }, false, "missing WARC-Target-URI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.edit(goodRecords()), tt.joined)
			r, err := Validate(path)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			found := false
			for _, e := range r.Errors {
				found = found || strings.Contains(e, tt.want)
			}
			if !found {
				t.Errorf("Validate(%s) errors %q, want one containing %q", tt.name, r.Errors, tt.want)
			}
		})
	}
}

func TestValidateMissingFile(t *testing.T) {
	r, err := Validate(filepath.Join(t.TempDir(), "none.warc.gz"))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "ENOENT") {
		t.Errorf("errors %q, want one about the missing file", r.Errors)
	}
	if _, err := Validate(); err == nil {
		t.Error("Validate() = nil error, want one for no files")
	}
}

// TestNodeMissing: without node the error says what to install and run.
func TestNodeMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Validate("x.warc.gz")
	if err == nil || !strings.Contains(err.Error(), InstallHint) || !strings.Contains(err.Error(), "node") {
		t.Errorf("Validate without node = %v, want an error naming node and %q", err, InstallHint)
	}
}

// TestModulesMissing: in a tree without tools/warcvalidate/node_modules the
// error says what to run.
func TestModulesMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	_, err := Validate("x.warc.gz")
	if err == nil || !strings.Contains(err.Error(), InstallHint) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Validate without node_modules = %v, want an error naming %q and %s", err, InstallHint, dir)
	}
}
