package api

import (
	"os"
	"strings"
	"testing"
)

// TestNoRouteWidensAllowNets: the IP guard's allowed ranges
// (node.Options.AllowNets, `--allow-net`) are fixed when the node opens;
// no route takes them. A crawl, seeds or host-policy body that tries to
// carry them is refused with 400 even with the operator's token (unknown
// fields are errors), changes nothing, and without the token is a 401.
// The OpenAPI file names no such field.
func TestNoRouteWidensAllowNets(t *testing.T) {
	web, _, c := newNodeAPI(t)
	seeds := `"seeds": ["` + web.Seeds()[0] + `"]`
	crawls := func() int {
		_, body := c.do("GET", "/v1/crawls", "", nil, true)
		list, _ := body["crawls"].([]any)
		return len(list)
	}
	widen := []struct{ route, path, body, field string }{
		{"POST", "/v1/crawls", `{` + seeds + `, "allow_nets": ["127.0.0.0/8"]}`, "allow_nets"},
		{"POST", "/v1/crawls", `{` + seeds + `, "allow_net": ["127.0.0.1/32"]}`, "allow_net"},
		{"POST", "/v1/crawls", `{` + seeds + `, "allowNets": ["::1/128"]}`, "allowNets"},
		{"POST", "/v1/crawls", `{` + seeds + `, "AllowNets": ["0.0.0.0/0"]}`, "AllowNets"},
		{"POST", "/v1/crawls", `{` + seeds + `, "scope": {"allow_nets": ["10.0.0.0/8"]}}`, "allow_nets"},
		{"POST", "/v1/crawls", `{` + seeds + `, "limits": {"allow_nets": ["10.0.0.0/8"]}}`, "allow_nets"},
		{"POST", "/v1/crawls", `{` + seeds + `, "hosts": {"evil.test": ["127.0.0.1"]}}`, "hosts"},
		{"PUT", "/v1/hosts/a.test/policy", `{"paused": false, "allow_nets": ["127.0.0.0/8"]}`, "allow_nets"},
		{"PUT", "/v1/hosts/a.test/policy", `{"allow_private": true}`, "allow_private"},
	}
	for _, w := range widen {
		for _, tok := range []string{testToken, ""} {
			code, body := c.do(w.route, w.path, tok, w.body, false)
			_, msg := errField(body)
			want := 400
			if tok == "" {
				want = 401
			}
			if code != want || (tok != "" && !strings.Contains(msg, w.field)) {
				t.Errorf("%s %s %s (token %v) = %d %q; want %d naming %q", w.route, w.path, w.body, tok != "", code, msg, want, w.field)
			}
		}
	}
	if n := crawls(); n != 0 {
		t.Errorf("after refused requests the node has %d crawls, want 0", n)
	}
	if code, body := c.do("GET", "/v1/hosts?state=paused", "", nil, true); code != 200 || len(body["hosts"].([]any)) != 0 {
		t.Errorf("refused policies changed something: %d %v", code, body)
	}
	spec, err := os.ReadFile("../docs/api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"allow_net", "allownet", "allow-net", "allow_private"} {
		if strings.Contains(strings.ToLower(string(spec)), word) {
			t.Errorf("docs/api/openapi.yaml mentions %q: a route may take allowed ranges", word)
		}
	}
}
