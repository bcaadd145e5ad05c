package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/wacz"
)

// GET /v1/crawls/{id}/wacz answers with the crawl's archive on this node
// as a WACZ file (package wacz), streamed as it is written: the finished
// WARC files of Options.DataDir that hold a record the crawl log shows
// fetched for the crawl, whole, with only that crawl's captures in the
// index and the pages. Records still in the WARC file being written are
// not in it; a crawl that shared another's fetches has no record of its
// own for those pages. It needs the bearer token: it hands out the
// archive's content, and reads every WARC file it packs. The answer has
// no Content-Length; an export that fails midway breaks the connection,
// so a client never takes a cut WACZ for a whole one.

func (c *crawls) registerExport(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/crawls/{id}/wacz", c.withToken("exporting a crawl's archive", c.withJob(c.exportWACZ)))
}

func (c *crawls) exportWACZ(w http.ResponseWriter, _ *http.Request, _ Node, j *job.Job) {
	if c.dataDir == "" {
		writeError(w, http.StatusNotFound, "", "this server exports no archive: it was given no data directory")
		return
	}
	title := j.Spec.Name
	if title == "" {
		title = fmt.Sprintf("trawl crawl %d", j.ID)
	}
	e, err := wacz.New(wacz.Options{Data: c.dataDir, Job: uint32(j.ID), Title: title})
	switch {
	case errors.Is(err, wacz.ErrNoWARC) || errors.Is(err, wacz.ErrNoCaptures):
		writeError(w, http.StatusNotFound, "id", fmt.Sprintf("crawl %d has no archived capture in a finished WARC file of this node yet (the file being written is exported once it is finished)", j.ID))
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	w.Header().Set("Content-Type", wacz.MediaType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="crawl-%d.wacz"`, j.ID))
	w.WriteHeader(http.StatusOK)
	if _, err := e.Write(w); err != nil {
		panic(http.ErrAbortHandler) // the answer is cut: break the connection
	}
}
