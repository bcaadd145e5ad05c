package fleet

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cluster/ckptstore"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestUnreadableCheckpointIsServedWithout: a partition whose checkpoint
// never reads whole (here: bytes that are not a checkpoint) is served
// from an empty state after a few tries, loudly, and the crawl of its
// host completes; before, the partition was never served and the crawl
// never ended (a CI run met a checkpoint whose chunks JetStream's client
// had stored out of order).
func TestUnreadableCheckpointIsServedWithout(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a member crawling a web; the full suite runs it")
	}
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 31, Hosts: 4}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	spec := job.Spec{Name: "fleet", Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: maxDepth, RobotsGiveUp: 3500 * time.Millisecond}
	seed, err := url.Parse(spec.Seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	p := partition.Of(seed.Hostname())

	srv := jstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := ckptstore.Open(ctx, jstest.JetStream(t, srv), ckptstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := jstest.JetStream(t, srv).ObjectStore(ctx, ckptstore.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, ckptstore.Name(p), []byte("not a checkpoint: the chunks of one, out of order")); err != nil {
		t.Fatal(err)
	}

	m := startMember(t, "node-1", srv, web, spec)
	analyze := func() *testweb.Report {
		return testweb.Analyze(web.Web(), web.Log(), testweb.AnalyzeOptions{
			Seeds: spec.Seeds, Agent: "trawl", Gap: gap, MaxDepth: spec.MaxDepth, Domain: spec.Domains[0],
			MaxParallel: 1, MaxParallelPerIP: 2, MinCoverage: 1,
		})
	}
	rep := waitCrawled(t, web, analyze, []*member{m}, 1, 2*time.Second, 2*time.Minute)
	st := m.fleet.Stats()
	lines := m.log.matching("served from an empty state")
	m.stop(t)
	if st.CheckpointsUnreadable != 1 {
		t.Errorf("CheckpointsUnreadable = %d, want 1 (partition %d)", st.CheckpointsUnreadable, p)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "partition="+strconv.Itoa(int(p))) {
		t.Errorf("the member's log about the unreadable checkpoint:\n%s\nwant one ERROR naming partition %d", strings.Join(lines, "\n"), p)
	}
	// The partition's baseline replaced the unreadable object. (A context
	// of its own: the crawl may have outlasted the set-up's.)
	lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer lcancel()
	if info, found, err := cs.Latest(lctx, p); err != nil || !found || info.Node != "node-1" || info.Keys <= 0 {
		t.Errorf("partition %d's checkpoint after the crawl: %+v, found %v, %v; want node-1's, with keys", p, info, found, err)
	}
	if probs := rep.Problems(); len(probs) > 0 {
		t.Errorf("the web's log shows %d problems:\n%s", len(probs), strings.Join(probs, "\n"))
	}
}
