package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/job"
)

// The routes that steer a running crawl: add seeds, edit its exclusion
// patterns.
func (c *crawls) registerSteering(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/crawls/{id}/seeds", c.mutation(c.withJob(c.addSeeds)))
	mux.HandleFunc("GET /v1/crawls/{id}/exclusions", c.withJob(func(w http.ResponseWriter, _ *http.Request, _ Node, j *job.Job) {
		writeExclusions(w, j.Exclusions())
	}))
	mux.HandleFunc("POST /v1/crawls/{id}/exclusions", c.mutation(c.withJob(c.editExclusions)))
}

func (c *crawls) addSeeds(w http.ResponseWriter, r *http.Request, n Node, j *job.Job) {
	var req wire.Seeds
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	if len(req.Seeds) == 0 || len(req.Seeds) > MaxSeedsPerCall {
		writeError(w, http.StatusBadRequest, "seeds", fmt.Sprintf("seeds: want 1 to %d seed URLs", MaxSeedsPerCall))
		return
	}
	added, err := n.AddSeeds(j.ID, req.Seeds)
	if err != nil {
		c.steeringError(w, j, err, map[string]string{"Seeds": "seeds"})
		return
	}
	writeJSON(w, http.StatusOK, wire.SeedsAdded{Added: added, AlreadySeen: len(req.Seeds) - added})
}

// MaxSeedsPerCall bounds the seeds one POST /v1/crawls/{id}/seeds adds.
const MaxSeedsPerCall = 10000

func (c *crawls) editExclusions(w http.ResponseWriter, r *http.Request, n Node, j *job.Job) {
	var req wire.ExclusionEdit
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	x, err := n.EditExclusions(j.ID, req.Add, req.Remove)
	if err != nil {
		c.steeringError(w, j, err, map[string]string{"Add": "add", "Remove": "remove", "Exclude": "add"})
		return
	}
	writeExclusions(w, x)
}

func writeExclusions(w http.ResponseWriter, x *job.Exclusions) {
	p := x.Patterns()
	if p == nil {
		p = []string{}
	}
	writeJSON(w, http.StatusOK, wire.Exclusions{Patterns: p})
}

// steeringError answers a refused change: 400 naming the field of a
// *job.FieldError (fields maps its names to the body's paths), 409 for an ended
// crawl, 500 otherwise.
func (c *crawls) steeringError(w http.ResponseWriter, j *job.Job, err error, fields map[string]string) {
	switch {
	case len(job.FieldErrors(err)) > 0:
		writeFieldErrors(w, err, fields)
	case errors.Is(err, job.ErrEnded):
		st, _ := j.State()
		writeError(w, http.StatusConflict, "", "crawl is "+string(st)+": "+err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "", err.Error())
	}
}
