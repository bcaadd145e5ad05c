package frontierdb

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestCrashKeepsAPrefix crashes the store (only synced writes survive)
// while changes are being applied and synced in the pipeline, at several
// moments. After each crash the store must hold every change that was
// acknowledged, and the changes it holds must be a prefix of the order
// they were written in: applying one group while the previous one is being
// synced must never let a later change survive an earlier one.
func TestCrashKeepsAPrefix(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, crashAfter := range []int{0, 1, 7, 40, 150, 399} {
		t.Run(fmt.Sprint(crashAfter), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			opts := store.Options{FS: mem, Logger: quiet, CacheSize: 1 << 20}
			db := storetest.OpenDir(t, "/state", opts)
			s := New(db, Options{MaxGroup: 8})
			f, err := frontier.New(frontier.Options{Store: s, Now: func() time.Time { return time.Unix(1e9, 0) }})
			if err != nil {
				t.Fatal(err)
			}
			const n = 400
			var (
				mu    sync.Mutex
				acked = map[string]bool{}
				wg    sync.WaitGroup
				urls  []string
			)
			var (
				crashed      *vfs.MemFS
				ackedAtCrash []string
			)
			for i := range n {
				u := fmt.Sprintf("http://h%d.test/%d", i%13, i)
				urls = append(urls, u)
				done := f.Add(nil, frontier.Item{URL: u, Host: fmt.Sprintf("h%d.test", i%13)}, frontier.Item{URL: u + "/b", Host: "other.test"})
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := <-done; err == nil {
						mu.Lock()
						acked[u] = true
						mu.Unlock()
					}
				}()
				if i == crashAfter {
					// Take the acknowledged set before the clone: everything
					// in it must survive.
					mu.Lock()
					for k := range acked {
						ackedAtCrash = append(ackedAtCrash, k)
					}
					mu.Unlock()
					crashed = mem.CrashClone(vfs.CrashCloneCfg{})
				}
			}
			wg.Wait()
			db = reopenCrashed(t, s, db, opts, crashed)
			defer db.Close()
			present := queuedURLs(t, db)
			gap := -1
			for i, u := range urls {
				if !present[u] && gap < 0 {
					gap = i
				}
				if present[u] && gap >= 0 {
					t.Fatalf("change %d (%s) survived the crash but change %d did not", i, u, gap)
				}
				if present[u] != present[u+"/b"] {
					t.Fatalf("change %d half applied: %s %v, %s/b %v", i, u, present[u], u, present[u+"/b"])
				}
			}
			for _, u := range ackedAtCrash {
				if !present[u] {
					t.Errorf("acknowledged change %s lost in the crash", u)
				}
			}
			t.Logf("crash after %d writes: %d acknowledged before, %d survived", crashAfter, len(ackedAtCrash), len(present)/2)
		})
	}
}

// TestCrashKeepsJobCounts drives jobs through a frontier on the store,
// with pauses, resumes and cancellations (held items and their moves) and
// dropped hosts (drained a window at a time), crashes the store at several
// moments and checks that each job's durable counters in each partition
// agree with the queue and held items of the partition that survived: the
// counters travel in the same batch as the changes they count.
func TestCrashKeepsJobCounts(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, crashAt := range []int{3, 50, 200, 611, 900, 1500} {
		t.Run(fmt.Sprint(crashAt), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			opts := store.Options{FS: mem, Logger: quiet, CacheSize: 1 << 20}
			db := storetest.OpenDir(t, "/state", opts)
			s := New(db, Options{MaxGroup: 4})
			c := newClock(time.Unix(1e9, 0))
			f, err := frontier.New(frontier.Options{Store: s, Now: c.now, MinDelay: time.Millisecond, Window: 3, MaxParallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(crashAt), 9))
			next := 0
			add := func(n int) []frontier.Item {
				var items []frontier.Item
				for range n {
					next++
					h := fmt.Sprintf("h%d.test", rng.IntN(12))
					items = append(items, frontier.Item{URL: fmt.Sprintf("http://%s/%d", h, next), Host: h, Job: uint32(rng.IntN(3))})
				}
				return items
			}
			if err := <-f.Add(nil, add(60)...); err != nil {
				t.Fatal(err)
			}
			var (
				out     []*frontier.Lease
				crashed *vfs.MemFS
			)
			for step := range 2000 {
				if step == crashAt {
					crashed = mem.CrashClone(vfs.CrashCloneCfg{})
				}
				switch r := rng.IntN(30); {
				case r < 2:
					// Wait for the move: SetJobState streams held items
					// back through the pipeline.
					m := frontier.JobPaused
					switch rng.IntN(10) {
					case 0:
						m = frontier.JobCancelled
					case 1, 2, 3, 4:
						m = frontier.JobActive
					}
					if err := f.SetJobState(uint32(rng.IntN(3)), m); err != nil {
						t.Fatal(err)
					}
				case r < 16:
					l, wait := f.Lease()
					if l == nil {
						c.advance(max(time.Millisecond, min(wait, time.Second)))
						continue
					}
					out = append(out, l)
				default:
					if len(out) == 0 {
						continue
					}
					i := rng.IntN(len(out))
					l := out[i]
					out = append(out[:i], out[i+1:]...)
					o := frontier.Outcome{Status: 200}
					switch rng.IntN(40) {
					case 0, 1, 2:
						o = frontier.Outcome{Status: 503, Requeue: true}
					case 3:
						o = frontier.Outcome{Status: 500, Requeue: true, DropHost: true}
					}
					var more []frontier.Item
					if next < 800 {
						more = add(rng.IntN(5))
					}
					if _, err := f.Complete(l, o, nil, more...); err != nil {
						t.Fatal(err)
					}
				}
			}
			if crashed == nil {
				crashed = mem.CrashClone(vfs.CrashCloneCfg{})
			}
			db = reopenCrashed(t, s, db, opts, crashed)
			defer db.Close()
			// What the store holds, per job and partition.
			queued, held := map[jobPart]int{}, map[jobPart]int{}
			it, err := db.NewIter(store.KindPrefix(store.KindQueue))
			if err != nil {
				t.Fatal(err)
			}
			for ok := it.First(); ok; ok = it.Next() {
				host, _, _, err := store.DecodeQueueKey(it.Key())
				if err != nil {
					t.Fatal(err)
				}
				item, err := decodeItem(host, it.Value())
				if err != nil {
					t.Fatal(err)
				}
				queued[jobPart{item.Job, partition.Of(host)}]++
			}
			it.Close()
			it, err = db.NewIter(store.KindPrefix(store.KindHeld))
			if err != nil {
				t.Fatal(err)
			}
			for ok := it.First(); ok; ok = it.Next() {
				k, err := store.DecodeKey(it.Key())
				if err != nil {
					t.Fatal(err)
				}
				held[jobPart{k.Job, k.Part}]++
			}
			it.Close()
			s2 := New(db, Options{})
			defer s2.Close()
			jobs := map[jobPart]frontier.JobState{}
			if err := s2.Load(func(frontier.HostState) error { return nil }, func(j frontier.JobState) error {
				jobs[jobPart{j.Job, partition.ID(j.Part)}] = j
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for id := range uint32(3) {
				for p := range partition.ID(partition.Count) {
					k := jobPart{id, p}
					if j := jobs[k]; j.Stored != queued[k] || j.Held != held[k] {
						t.Errorf("job %d partition %d after the crash: counters %+v, store holds %d queued, %d held", id, p, j, queued[k], held[k])
					}
				}
			}
			t.Logf("crash at step %d: jobs %v; queued %v held %v", crashAt, jobs, queued, held)
		})
	}
}

// TestCrashKeepsCompletions completes leases of a few hosts in a row, so
// that the committer's groups (sorted by key before they are applied, see
// store.ApplyGroup) hold several completions of one host, each writing the
// host's state, and crashes the store at several moments. After each
// crash: every acknowledged completion is durable (its item is gone); the
// completions that survived are a prefix of the order they were made in;
// and each host's stored state is the one its last surviving completion
// wrote, never an older one (a stale clock winning would break the
// host's gap across a restart).
func TestCrashKeepsCompletions(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, crashAt := range []int{0, 5, 60, 200, 301, 333} {
		t.Run(fmt.Sprint(crashAt), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			opts := store.Options{FS: mem, Logger: quiet, CacheSize: 1 << 20}
			db := storetest.OpenDir(t, "/state", opts)
			s := New(db, Options{MaxGroup: 16})
			c := newClock(time.Unix(1e9, 0))
			f, err := frontier.New(frontier.Options{Store: s, Now: c.now, MinDelay: -1})
			if err != nil {
				t.Fatal(err)
			}
			const hosts, perHost = 3, 120
			var items []frontier.Item
			for i := range hosts * perHost {
				h := fmt.Sprintf("h%d.test", i%hosts)
				items = append(items, frontier.Item{URL: fmt.Sprintf("http://%s/%d", h, i), Host: h})
			}
			if err := <-f.Add(nil, items...); err != nil {
				t.Fatal(err)
			}
			type completion struct {
				url, host string
				next      time.Time // the host's next allowed time it wrote
			}
			var (
				mu           sync.Mutex
				acked        = map[string]bool{}
				wg           sync.WaitGroup
				done         []completion
				pending      []<-chan struct{} // the completions in flight, oldest first
				crashed      *vfs.MemFS
				ackedAtCrash []string
			)
			for len(done) < hosts*perHost {
				if len(done) == crashAt {
					mu.Lock()
					for u := range acked {
						ackedAtCrash = append(ackedAtCrash, u)
					}
					mu.Unlock()
					crashed = mem.CrashClone(vfs.CrashCloneCfg{})
				}
				// At most 24 in flight, as a node's workers keep them:
				// the committer groups what arrives meanwhile.
				if len(pending) >= 24 {
					<-pending[0]
					pending = pending[1:]
				}
				l, _ := f.Lease()
				if l == nil {
					select {
					case <-f.Changed():
					case <-time.After(5 * time.Second):
						t.Fatalf("no lease after %d completions: %+v", len(done), f.Stats())
					}
					continue
				}
				c.advance(time.Millisecond)
				ch, err := f.Complete(l, frontier.Outcome{Status: 200}, nil)
				if err != nil {
					t.Fatal(err)
				}
				done = append(done, completion{l.Item.URL, l.Item.Host, c.now()})
				recorded := make(chan struct{})
				pending = append(pending, recorded)
				wg.Add(1)
				go func(u string) {
					defer wg.Done()
					defer close(recorded)
					if err := <-ch; err == nil {
						mu.Lock()
						acked[u] = true
						mu.Unlock()
					}
				}(l.Item.URL)
			}
			wg.Wait()
			db = reopenCrashed(t, s, db, opts, crashed)
			defer db.Close()
			queued := queuedURLs(t, db)
			for _, u := range ackedAtCrash {
				if queued[u] {
					t.Errorf("acknowledged completion of %s lost in the crash", u)
				}
			}
			survived := 0
			for survived < len(done) && !queued[done[survived].url] {
				survived++
			}
			for i := survived; i < len(done); i++ {
				if !queued[done[i].url] {
					t.Fatalf("completion %d (%s) survived the crash but completion %d did not", i, done[i].url, survived)
				}
			}
			want := map[string]time.Time{}
			for _, d := range done[:survived] {
				want[d.host] = d.next
			}
			for h, next := range want {
				v, err := db.Get(store.HostKey(h))
				if err != nil {
					t.Fatalf("host %s: %v", h, err)
				}
				st, err := decodeHostState(v)
				if err != nil {
					t.Fatal(err)
				}
				if !st.NextAllowed.Equal(next) {
					t.Errorf("host %s after the crash: next allowed %v, want %v (its last surviving completion's)", h, st.NextAllowed, next)
				}
			}
			t.Logf("crash after %d completions: %d acknowledged before, %d survived", crashAt, len(ackedAtCrash), survived)
		})
	}
}

// queuedURLs returns the URLs of every queue item in db.
func queuedURLs(t *testing.T, db *store.DB) map[string]bool {
	t.Helper()
	urls := map[string]bool{}
	it, err := db.NewIter(store.KindPrefix(store.KindQueue))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		host, _, _, err := store.DecodeQueueKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		item, err := decodeItem(host, it.Value())
		if err != nil {
			t.Fatal(err)
		}
		urls[item.URL] = true
	}
	return urls
}

// reopenCrashed closes s and db, and opens the store with opts as crashed
// holds it.
func reopenCrashed(t *testing.T, s *Store, db *store.DB, opts store.Options, crashed vfs.FS) *store.DB {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	opts.FS = crashed
	db, err := store.Open("/state", opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
