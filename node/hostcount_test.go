package node

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestHostStatusCountsAgree: while two crawls that share hosts run, a
// host's per-crawl counts (HostStatus) are those of its totals at the same
// moment: the queued per crawl sum to Queued + InFlight (an item in
// flight is still the crawl's), the in flight per crawl to InFlight.
// Before, the per-crawl counts were read from the store by the frontier's
// refill reader, whose long-lived snapshot still held items fetched since:
// "58 queued" beside "crawl 1: 51, crawl 2: 48".
func TestHostStatusCountsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 9, Hosts: 3, BigHosts: 2, BigPages: 150, Latency: -1}, 5*time.Millisecond)
	a, b := h.spec, h.spec
	a.Name, b.Name = "a", "b"
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ja, err := n.Submit(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := n.Submit(b)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	checked, both, inFlight := 0, 0, 0
	// Until both crawls end, look at the host with the most queued, again
	// and again (bounded: the crawls end, or the deadline passes).
	deadline := time.Now().Add(2 * time.Minute)
	for done := false; !done; {
		select {
		case <-ja.Ended():
			select {
			case <-jb.Ended():
				done = true
			default:
			}
		default:
		}
		time.Sleep(2 * time.Millisecond) // a look every few ms leaves the crawl the CPU
		if time.Now().After(deadline) {
			t.Fatalf("the crawls did not end in 2 minutes: %+v", n.FrontierStats())
		}
		page, _, err := n.Hosts(HostFilter{Limit: MaxHostsPage})
		if err != nil {
			t.Fatal(err)
		}
		busiest, most := "", 0
		for _, hi := range page {
			if hi.Queued+hi.InFlight > most {
				busiest, most = hi.Host, hi.Queued+hi.InFlight
			}
		}
		if busiest == "" {
			continue
		}
		s, known, err := n.HostStatus(busiest)
		if err != nil || !known {
			t.Fatalf("HostStatus(%s) = %v, %v", busiest, known, err)
		}
		queued, flying := 0, 0
		for _, c := range s.QueuedByJob {
			queued += c
		}
		for _, c := range s.InFlightByJob {
			flying += c
		}
		if !s.QueuedCounted {
			t.Errorf("%s: counted in part (%d items in all)", busiest, s.Queued+s.InFlight)
			continue
		}
		if queued != s.Queued+s.InFlight || flying != s.InFlight {
			t.Fatalf("%s: %d queued + %d in flight, but by crawl %v queued (%d), %v in flight (%d)",
				busiest, s.Queued, s.InFlight, s.QueuedByJob, queued, s.InFlightByJob, flying)
		}
		checked++
		if s.QueuedByJob[ja.ID] > 0 && s.QueuedByJob[jb.ID] > 0 {
			both++
		}
		if s.InFlight > 0 {
			inFlight++
		}
	}
	t.Logf("%d checks, %d with both crawls' items queued, %d with items in flight", checked, both, inFlight)
	if both < 3 || inFlight < 1 {
		t.Errorf("%d checks saw both crawls' items, %d items in flight: the test did not look while the crawls shared the host", both, inFlight)
	}
	for _, j := range []*job.Job{ja, jb} {
		if st, why := j.State(); st != job.Finished {
			t.Errorf("job %d: %s (%s)", j.ID, st, why)
		}
	}
}
