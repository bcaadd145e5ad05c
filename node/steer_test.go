package node

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestExclusionsAndSeedsOnARunningCrawl: a crawl is paused mid-way (the
// whole node, until nothing is in flight), the host with the most queued
// URLs is excluded and a seed added; resumed, the web sees no request for
// the excluded host (its queued URLs are dropped at their lease, counted
// as excluded) and one for the new seed. The exclusion survives a restart.
func TestExclusionsAndSeedsOnARunningCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 11, Hosts: 10}, 15*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	waitFor(t, 20*time.Second, "some requests", func() bool { return len(h.srv.Log()) >= 20 })
	if err := n.PauseNode(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "nothing in flight", func() bool { return n.FrontierStats().InFlight == 0 })

	hosts, _, err := n.Hosts(HostFilter{Job: j.ID, Limit: MaxHostsPage})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(hosts, func(a, b frontier.HostInfo) int { return b.Queued - a.Queued })
	if len(hosts) == 0 || hosts[0].Queued < 2 {
		t.Fatalf("no host with queued URLs to exclude: %+v", hosts)
	}
	excluded, queued := hosts[0].Host, hosts[0].Queued
	pattern := `^https?://` + regexp.QuoteMeta(excluded) + `[:/]`

	// Bad edits change nothing.
	if _, err := n.EditExclusions(j.ID, []string{"("}, nil); err == nil {
		t.Fatal("EditExclusions accepted a bad pattern")
	}
	if _, err := n.EditExclusions(j.ID, nil, []string{"never added"}); err == nil {
		t.Fatal("EditExclusions removed a pattern that was not there")
	}
	if x, err := n.EditExclusions(j.ID, []string{pattern}, nil); err != nil || !slices.Equal(x.Patterns(), []string{pattern}) {
		t.Fatalf("EditExclusions = %v, %v", x, err)
	}

	domain := h.spec.Domains[0]
	var fe *job.FieldError
	if _, err := n.AddSeeds(j.ID, []string{"http://outside.example/"}); !errors.As(err, &fe) || fe.Field != "Seeds" {
		t.Errorf("AddSeeds outside the domains: %v, want a Seeds FieldError", err)
	}
	if _, err := n.AddSeeds(j.ID, []string{"ftp://x." + domain + "/"}); !errors.As(err, &fe) {
		t.Errorf("AddSeeds with an ftp URL: %v, want a FieldError", err)
	}
	seedHost := ""
	for _, hi := range hosts[1:] {
		seedHost = hi.Host
		break
	}
	if seedHost == "" {
		seedHost = hostOf(t, h.spec.Seeds[0])
	}
	newSeed := "http://" + seedHost + ":" + strconv.Itoa(h.srv.Port()) + "/added-by-an-operator"
	if added, err := n.AddSeeds(j.ID, []string{newSeed, newSeed}); err != nil || added != 1 {
		t.Fatalf("AddSeeds = %d, %v; want 1 (the same URL twice)", added, err)
	}
	if added, err := n.AddSeeds(j.ID, []string{newSeed}); err != nil || added != 0 {
		t.Fatalf("AddSeeds again = %d, %v; want 0: the job has seen it", added, err)
	}
	mark := len(h.srv.Log())
	if err := n.ResumeNode(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.Ended():
	case <-time.After(40 * time.Second):
		t.Fatalf("job did not end: %+v", n.FrontierStats())
	}
	p, _ := n.Progress(j.ID)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	sawSeed := false
	for _, r := range h.srv.Log()[mark:] {
		if r.Host == excluded {
			t.Errorf("excluded host requested after the exclusion: %s", r.Path)
		}
		if r.Host == seedHost && r.Path == "/added-by-an-operator" {
			sawSeed = true
		}
	}
	if !sawSeed {
		t.Error("the added seed was never requested")
	}
	if p.Excluded < int64(queued) {
		t.Errorf("Excluded = %d, want at least the %d URLs queued for %s", p.Excluded, queued, excluded)
	}
	if _, err := n.AddSeeds(j.ID, []string{newSeed + "2"}); !errors.Is(err, job.ErrEnded) {
		t.Errorf("AddSeeds to an ended job: %v", err)
	}

	n, err = Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if got := n.Job(j.ID).Exclusions().Patterns(); !slices.Equal(got, []string{pattern}) {
		t.Errorf("exclusions after a restart: %q", got)
	}
	t.Logf("excluded %s (%d queued; %d URLs excluded in all)", excluded, queued, p.Excluded)
}
