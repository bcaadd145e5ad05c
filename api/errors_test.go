package api

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/job"
)

// TestCreateErrorsInTheUsersWords sends bad bodies to POST /v1/crawls of
// a real node: each gets its status and an error naming the JSON path at
// fault (with the element of a list) and saying what was wrong and what
// would be right, in the request's words: no Go type, no package prefix.
// A crawl's seed outside its own domains is refused as POST
// /v1/crawls/{id}/seeds refuses it, in the same words. None of them
// creates a crawl.
func TestCreateErrorsInTheUsersWords(t *testing.T) {
	_, n, c := newNodeAPI(t)
	const seed = `"seeds": ["http://a.test/"]`
	for _, b := range []struct {
		name, body string
		code       int
		field, msg string
	}{
		{"an array", `[]`, 400, "", "body: want a JSON object, got an array"},
		{"null", `null`, 400, "", "body: want a JSON object, got null"},
		{"empty", ``, 400, "", "body: empty: want a JSON object"},
		{"malformed", `{"seeds": [`, 400, "", "body: malformed JSON at byte 11: unexpected end of JSON input"},
		{"two values", `{` + seed + `} {}`, 400, "", "body: more than one JSON value"},
		{"unknown key", `{"sedes": ["http://a.test/"]}`, 400, "sedes", "sedes: unknown field (did you mean seeds?)"},
		{"unknown nested key", `{` + seed + `, "scope": {"domain": ["a.test"]}}`, 400, "scope.domain", "scope.domain: unknown field (did you mean scope.domains?)"},
		{"unknown key, nothing near", `{` + seed + `, "limits": {"zzz": 1}}`, 400, "limits.zzz", "limits.zzz: unknown field: want one of max_pages, max_wait_s, robots_give_up_s"},
		{"seeds not a list", `{"seeds": "http://a.test/"}`, 400, "seeds", "seeds: want an array of strings, got a string"},
		{"a seed not a string", `{"seeds": ["http://a.test/", 7]}`, 400, "seeds[1]", "seeds[1]: want a string, got 7"},
		{"scope not an object", `{` + seed + `, "scope": []}`, 400, "scope", "scope: want an object, got an array"},
		{"huge depth", `{` + seed + `, "scope": {"max_depth": 1e30}}`, 400, "scope.max_depth", "scope.max_depth: want an integer, got 1e30"},
		{"fractional depth", `{` + seed + `, "scope": {"max_depth": 1.5}}`, 400, "scope.max_depth", "scope.max_depth: want an integer, got 1.5"},
		{"no seeds", `{"seeds": []}`, 400, "seeds", "seeds: at least one seed URL is needed"},
		{"no seeds key", `{"name": "x"}`, 400, "seeds", "seeds: at least one seed URL is needed"},
		{"ftp seed", `{"seeds": ["ftp://x/"]}`, 400, "seeds[0]", `seeds[0]: "ftp://x/" is not an http or https URL`},
		{"seed outside its domains", `{"seeds": ["http://a.test/", "http://b.test/"], "scope": {"domains": ["a.test"]}}`, 400, "seeds[1]",
			`seeds[1]: "http://b.test/" is outside the crawl's domains (a.test)`},
		{"bad domain", `{` + seed + `, "scope": {"domains": ["a.test", "a b"]}}`, 400, "scope.domains[1]", `scope.domains[1]: "a b" is not a host name: want one such as example.org`},
		{"negative depth", `{` + seed + `, "scope": {"max_depth": -1}}`, 400, "scope.max_depth", "scope.max_depth: -1 is negative: want 0 (no limit) or more"},
		{"negative pages", `{` + seed + `, "limits": {"max_pages": -1}}`, 400, "limits.max_pages", "limits.max_pages: -1 is negative: want 0 (no limit) or more"},
		{"negative give-up", `{` + seed + `, "limits": {"robots_give_up_s": -1}}`, 400, "limits.robots_give_up_s", "limits.robots_give_up_s: -1s is negative: want 0 (never) up to a year"},
		{"recrawl without continuous", `{` + seed + `, "recrawl": {"min_s": 60}}`, 400, "recrawl.min_s", "recrawl.min_s: 1m0s: only a continuous crawl recrawls: set continuous"},
		{"recrawl min above max", `{` + seed + `, "continuous": true, "recrawl": {"min_s": 7200, "max_s": 3600}}`, 400, "recrawl.min_s", "recrawl.min_s: 2h0m0s is above recrawl.max_s 1h0m0s"},
		{"give-up beyond a Duration", `{` + seed + `, "limits": {"robots_give_up_s": 1e300}}`, 400, "limits.robots_give_up_s", "limits.robots_give_up_s: 2562047h47m16.854775807s is over a year: want 0 (never) up to a year"},
		{"priority", `{` + seed + `, "priority": 2}`, 400, "priority", "priority: 2: want -1 (low), 0 (normal) or 1 (high)"},
		{"two faults", `{"seeds": ["ftp://x/"], "priority": 2}`, 400, "priority", `priority: 2: want -1 (low), 0 (normal) or 1 (high); seeds[0]: "ftp://x/" is not an http or https URL`},
	} {
		code, body := c.do("POST", "/v1/crawls", testToken, b.body, false)
		if field, msg := errField(body); code != b.code || field != b.field || msg != b.msg {
			t.Errorf("%s: POST /v1/crawls %s = %d, field %q, message %q;\nwant %d, field %q, message %q", b.name, b.body, code, field, msg, b.code, b.field, b.msg)
		}
	}
	if jobs := n.Jobs(); len(jobs) != 0 {
		t.Fatalf("after bad requests the node has %d crawls, want 0", len(jobs))
	}

	// The same seed, added to a crawl of the same domains, is refused in
	// the same words.
	code, body := c.do("POST", "/v1/crawls", testToken, `{"seeds": ["http://a.test/"], "scope": {"domains": ["a.test"]}}`, true)
	id, _ := body["crawl_id"].(float64)
	if code != 202 {
		t.Fatalf("POST /v1/crawls = %d %v", code, body)
	}
	code, body = c.do("POST", "/v1/crawls/"+jsonNumber(id)+"/seeds", testToken, `{"seeds": ["http://a.test/x", "http://b.test/"]}`, true)
	if field, msg := errField(body); code != 400 || field != "seeds[1]" || msg != `seeds[1]: "http://b.test/" is outside the crawl's domains (a.test)` {
		t.Errorf("POST /v1/crawls/%v/seeds out of scope = %d, field %q, message %q", id, code, field, msg)
	}
}

// TestCreateDefaults: a key left out of POST /v1/crawls takes the crawl's
// default (job.Defaults), the one trawl crawl's flags have; 0 given says
// "no limit" and "never", as the OpenAPI file documents.
func TestCreateDefaults(t *testing.T) {
	_, n, c := newNodeAPI(t)
	for _, b := range []struct {
		name, body string
		want       func(job.Spec) job.Spec
	}{
		{"omitted", `{"seeds": ["http://a.test/"]}`, func(s job.Spec) job.Spec { return s }},
		{"zero given", `{"seeds": ["http://a.test/"], "scope": {"max_depth": 0}, "limits": {"robots_give_up_s": 0}}`,
			func(s job.Spec) job.Spec { s.MaxDepth, s.RobotsGiveUp = 0, 0; return s }},
		{"null given", `{"seeds": ["http://a.test/"], "scope": {"max_depth": null}, "limits": null}`, func(s job.Spec) job.Spec { return s }},
		{"set", `{"seeds": ["http://a.test/"], "scope": {"max_depth": 3}, "limits": {"robots_give_up_s": 2.5}}`,
			func(s job.Spec) job.Spec { s.MaxDepth, s.RobotsGiveUp = 3, 2500*time.Millisecond; return s }},
	} {
		code, body := c.do("POST", "/v1/crawls", testToken, b.body, !strings.Contains(b.body, "null"))
		id, _ := body["crawl_id"].(float64)
		if code != 202 {
			t.Fatalf("%s: POST /v1/crawls = %d %v", b.name, code, body)
		}
		d := job.Defaults()
		d.Seeds = []string{"http://a.test/"}
		want := b.want(d)
		got := n.Job(job.ID(id)).Spec
		if got.MaxDepth != want.MaxDepth || got.RobotsGiveUp != want.RobotsGiveUp || got.MaxPages != want.MaxPages || got.Priority != want.Priority {
			t.Errorf("%s: the crawl's spec = %+v, want %+v", b.name, got, want)
		}
		if !strings.Contains(b.body, "max_depth") {
			_, view := c.do("GET", "/v1/crawls/"+jsonNumber(id), "", nil, true)
			if view["max_depth"] != float64(job.DefaultMaxDepth) {
				t.Errorf("%s: GET the crawl: max_depth %v, want %d", b.name, view["max_depth"], job.DefaultMaxDepth)
			}
		}
	}
}

// TestRequestCarriesTheSpec: every job.Spec field is either carried by
// POST /v1/crawls's body, both ways (requestOf and spec) and with a JSON
// path for its errors, or named here as one the body does not set. A
// field added to job.Spec fails this test until its door is decided.
func TestRequestCarriesTheSpec(t *testing.T) {
	notInTheBody := map[string]bool{"MaxShapeRun": true, "Exclude": true} // Exclude: POST /v1/crawls/{id}/exclusions
	for _, f := range reflect.VisibleFields(reflect.TypeFor[job.Spec]()) {
		var s job.Spec
		v := reflect.ValueOf(&s).Elem().FieldByIndex(f.Index)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"x"}))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(3 * time.Second)) // whole seconds, for a Duration
		case reflect.Float64:
			v.SetFloat(2.5)
		default:
			t.Fatalf("Spec.%s: a %s; teach this test its kind", f.Name, v.Kind())
		}
		back := reflect.ValueOf(specOf(requestOf(s), job.Defaults())).FieldByIndex(f.Index)
		carried := reflect.DeepEqual(back.Interface(), v.Interface())
		switch {
		case carried && specPaths[f.Name] == "":
			t.Errorf("Spec.%s is carried by the body but has no JSON path in specPaths", f.Name)
		case !carried && !notInTheBody[f.Name]:
			t.Errorf("Spec.%s is not carried by POST /v1/crawls's body (requestOf, spec): carry it, or name it in notInTheBody", f.Name)
		}
	}
}
