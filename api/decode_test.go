package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/api/wire"
)

// FuzzCheckBody: checkBody never panics; a body it passes decodes into
// the request strictly (no unknown key, every value of its type), and a
// message it gives starts with the path it names ("body" for the whole).
func FuzzCheckBody(f *testing.F) {
	for _, b := range []string{`{}`, `[]`, `null`, ``, `{"seeds": [`, `{"seeds": ["http://a.test/"]} {}`,
		`{"seeds": ["http://a.test/", 7], "scope": {"domain": ["a.test"], "max_depth": 1.5}}`,
		`{"name": "x", "seeds": ["http://a.test/"], "scope": {"domains": ["a.test"], "max_depth": 3, "session_params": ["sid"], "keep_session_ids": true},
		  "priority": -1, "limits": {"max_pages": 10, "robots_give_up_s": 2.5}, "continuous": true, "recrawl": {"min_s": 60, "max_s": 3600, "budget_per_hour": 1}}`,
		`{"priority": 1e400}`, `{"Seeds": []}`, `{"limits": {"max_pages": 99999999999999999999}}`,
	} {
		f.Add([]byte(b))
	}
	typ := reflect.TypeFor[wire.CrawlRequest]()
	f.Fuzz(func(t *testing.T, body []byte) {
		path, msg := checkBody(body, typ)
		if msg == "" {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			var r wire.CrawlRequest
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("checkBody(%q) passed, but it does not decode: %v", body, err)
			}
			return
		}
		want := path
		if want == "" {
			want = "body"
		}
		if !strings.HasPrefix(msg, want+": ") {
			t.Fatalf("checkBody(%q) = %q, %q: the message does not start with its path", body, path, msg)
		}
	})
}
