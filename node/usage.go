package node

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/usagepref"
	"github.com/trawl-crawler/trawl/warc"
)

// Usage preferences: what a site says of the use of its content (package
// usagepref: robots.txt Content-Usage and Content-Signal lines, the
// X-Robots-Tag and TDMRep header fields, robots and TDMRep meta
// elements). Every capture whose site states something gets a WARC
// metadata record beside its response (usageRecord, referring to it) and
// a summary in its crawl log line. A crawl that states its purpose
// (job.Spec.Purpose) marks the captures whose site denies it and, with
// job.DeniedSkip, does not archive them; their links are followed all the
// same. For a job that reads TDMRep files, the origin's
// /.well-known/tdmrep.json is fetched before its pages (tdmrep.go); its
// rule for the capture is one more signal.

// usageRecord is the block of a capture's usage metadata record: the
// signals as served and their summary (usagepref.Preferences, whose JSON
// form is stable), and, for a crawl that states its purpose, that purpose
// and whether the site denies it.
type usageRecord struct {
	usagepref.Preferences
	Purpose string `json:"purpose,omitempty"`
	Denied  bool   `json:"denied,omitempty"`
}

// usageMediaType is the usage metadata record's Content-Type.
const usageMediaType = "application/json"

// usageVerdict is what a capture's site says and what its job does.
type usageVerdict struct {
	record  *warc.Metadata // nil when the site states nothing
	summary string         // crawllog.Entry.Usage
	denied  string         // the job's purpose, if the site denies it
	skip    bool           // not to be archived
}

// usageOf gathers what the site says of the use of the capture resp of u,
// under robots.txt policy pol (nil: none), with the page's use-stating
// meta elements metas, and what job j does about it.
func (n *Node) usageOf(j *job.Job, u *url.URL, resp *fetch.Response, pol *robots.Policy, metas []links.Meta) usageVerdict {
	var rb *robots.Robots
	if pol != nil {
		rb = pol.Robots()
	}
	tdm := n.tdmRules(j, u)
	p := usagepref.Gather(usagepref.Input{Agent: n.agent, PathQuery: u.RequestURI(), Robots: rb, Header: resp.Header, Metas: metas, TDMRep: tdm})
	if len(p.Signals) == 0 {
		return usageVerdict{}
	}
	v := usageVerdict{summary: usageSummary(p.Summary)}
	if purposeDenied(j.Spec.Purpose, p.Summary) {
		v.denied = j.Spec.Purpose
		v.skip = j.Spec.OnDenied == job.DeniedSkip
	}
	body, err := json.Marshal(usageRecord{Preferences: p, Purpose: j.Spec.Purpose, Denied: v.denied != ""})
	if err != nil { // a Preferences always marshals; keep the capture
		n.opts.Logger.Warn("usage preferences: encode", "url", u.String(), "err", err)
		return v
	}
	v.record = &warc.Metadata{ContentType: usageMediaType, Body: body}
	return v
}

// purposeDenied reports whether summary s denies purpose.
func purposeDenied(purpose string, s usagepref.Summary) bool {
	switch purpose {
	case job.PurposeArchive:
		return s.Archive == usagepref.Deny
	case job.PurposeSearch:
		return s.Search == usagepref.Deny
	case job.PurposeAITrain:
		return s.AITrain == usagepref.Deny
	case job.PurposeAIInput:
		return s.AIInput == usagepref.Deny
	}
	return false
}

// usageSummary is s in the crawl log's form: "category=allow|deny" for
// each category s states, comma-separated, then "tdm=0|1" if a TDMRep
// reservation is in force.
func usageSummary(s usagepref.Summary) string {
	var b strings.Builder
	for _, c := range []struct {
		name string
		p    usagepref.Pref
	}{{job.PurposeAITrain, s.AITrain}, {job.PurposeAIInput, s.AIInput}, {job.PurposeSearch, s.Search}, {job.PurposeArchive, s.Archive}} {
		if c.p == usagepref.Unknown {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.name + "=" + c.p.String())
	}
	if r := s.TDMReservation; r != nil {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString("tdm=" + strconv.Itoa(*r))
	}
	return b.String()
}
