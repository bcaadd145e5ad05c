package usagepref_test

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/usagepref"
)

func ExampleGather() {
	rb := robots.Parse([]byte("User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Signal: search=yes, ai-input=yes\n"))
	tdm := usagepref.ParseTDMRep([]byte(`[{"location": "/news/", "tdm-reservation": 1}]`))
	h := http.Header{"X-Robots-Tag": {"noarchive"}, "Content-Type": {"text/html"}}
	page := links.Extract([]byte(`<meta name="robots" content="noindex">`), "trawl")

	p := usagepref.Gather(usagepref.Input{
		Agent: "trawl", PathQuery: "/news/today", Robots: rb, Header: h, Metas: page.Metas, TDMRep: tdm,
	})
	s, _ := json.Marshal(p.Summary)
	fmt.Println(len(p.Signals), string(s))
	// Output:
	// 5 {"ai_train":"deny","ai_input":"allow","search":"deny","archive":"deny","tdm_reservation":1}
}
