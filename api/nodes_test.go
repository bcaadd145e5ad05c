package api

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestNodesRoute: GET /v1/nodes answers, as the OpenAPI file says, with
// no members for a node on its own and with the members and their
// partitions for a fleet's.
func TestNodesRoute(t *testing.T) {
	for _, c := range []struct {
		name      string
		members   func() []Member
		wantFleet bool
		wantNodes []any
	}{
		{"alone", nil, false, []any{}},
		{"fleet, nothing listed yet", func() []Member { return nil }, true, []any{}},
		{"fleet", func() []Member {
			return []Member{
				{Name: "n1", Info: json.RawMessage(`{"api":"http://127.0.0.1:8421"}`), Owns: []int{0, 2}},
				{Name: "n2", Leaving: true, Owns: []int{1}},
			}
		}, true, []any{
			map[string]any{"name": "n1", "leaving": false, "info": map[string]any{"api": "http://127.0.0.1:8421"}, "owns": []any{0.0, 2.0}},
			map[string]any{"name": "n2", "leaving": true, "owns": []any{1.0}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(New(Options{Node: func() Node { return nil }, Members: c.members, Self: "n1"}))
			defer srv.Close()
			code, body := newAPIClient(t, srv.URL).do("GET", "/v1/nodes", "", nil, true)
			if code != 200 || body["fleet"] != c.wantFleet || !reflect.DeepEqual(body["nodes"], c.wantNodes) {
				t.Errorf("GET /v1/nodes = %d %v, want fleet %v nodes %v", code, body, c.wantFleet, c.wantNodes)
			}
		})
	}
}
