package robotscache_test

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/robotscache"
)

// A crawler asks the keeper before each fetch, fetches robots.txt when
// told to, and hands the answer back.
func ExampleKeeper() {
	db, err := store.Open("state", store.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	keeper, err := robotscache.NewKeeper(robotscache.KeeperOptions{DB: db})
	if err != nil {
		panic(err)
	}
	host, origin := "example.test", "https://example.test:443"
	page, _ := url.Parse("https://example.test/private/x")

	for range 2 { // two leases of the page
		v := keeper.Check(host, origin)
		fmt.Println(v.Action)
		switch v.Action {
		case robotscache.Apply:
			d, _ := v.Policy.CrawlDelay("trawl")
			fmt.Println("allowed:", v.Policy.Allowed("trawl", page), "crawl-delay:", d)
		case robotscache.Fetch:
			if err := keeper.Begin(host, origin); err != nil {
				keeper.Cancel(host, origin)
				return
			}
			fmt.Println("GET", v.URL) // the fetcher's job; the answer:
			ans := robotscache.Answer{Status: 200, Body: []byte("User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n")}
			b := db.NewBatch()
			if _, err := keeper.Done(b, host, origin, ans); err != nil {
				b.Close()
				return
			}
			if err := db.Commit(b); err != nil { // with the lease's completion
				return
			}
		}
	}
	// Output:
	// fetch
	// GET https://example.test:443/robots.txt
	// apply
	// allowed: false crawl-delay: 2s
}
