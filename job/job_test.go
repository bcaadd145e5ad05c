package job

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/scope"
)

func TestSpecValidate(t *testing.T) {
	ok := Spec{Seeds: []string{"http://a.test/"}}
	for _, tc := range []struct {
		name string
		spec Spec
		want []string // substrings of the error; none means valid
	}{
		{"minimal", ok, nil},
		{"no seeds", Spec{}, []string{"Seeds"}},
		{"bad seed", Spec{Seeds: []string{"http://a.test/", "ftp://b.test/"}}, []string{`Seeds[1]: "ftp://b.test/" is not an http or https URL`}},
		{"relative seed", Spec{Seeds: []string{"/x"}}, []string{`Seeds[0]: "/x" is not an absolute`}},
		{"negatives", Spec{Seeds: ok.Seeds, MaxDepth: -1, MaxPages: -2, RobotsGiveUp: -time.Second},
			[]string{"MaxDepth", "MaxPages", "RobotsGiveUp"}},
		{"priority", Spec{Seeds: ok.Seeds, Priority: 2}, []string{"Priority"}},
		{"domain", Spec{Seeds: ok.Seeds, Domains: []string{"a.test/x"}}, []string{"Domains"}},
		{"name", Spec{Seeds: ok.Seeds, Name: strings.Repeat("n", 129)}, []string{"Name"}},
	} {
		err := tc.spec.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Validate() = nil, want errors naming %q", tc.name, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %v, want it to name %q", tc.name, err, w)
			}
		}
	}
}

func TestNewScopeDefaultsToSeedHosts(t *testing.T) {
	j, err := New(3, Spec{Seeds: []string{"HTTP://A.Test:80/x", "https://b.test/"}}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(j.Scope.Domains, ","); got != "a.test,b.test" {
		t.Errorf("Scope.Domains = %q, want a.test,b.test", got)
	}
	if got := j.Seeds[0].String(); got != "http://a.test/x" {
		t.Errorf("Seeds[0] = %q, want the canonical http://a.test/x", got)
	}
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct{ prio, depth, levels, want int }{
		{0, 0, 3, 0}, {0, 1, 3, 1}, {0, 7, 3, 2},
		{1, 0, 3, 0}, {1, 2, 3, 1}, {1, 9, 3, 1},
		{-1, 0, 3, 1}, {-1, 1, 3, 2}, {-1, 5, 3, 2},
		{0, 5, 1, 0},
	} {
		j := &Job{Spec: Spec{Priority: tc.prio}}
		if got := j.Level(tc.depth, tc.levels); got != tc.want {
			t.Errorf("priority %d: Level(%d, %d) = %d, want %d", tc.prio, tc.depth, tc.levels, got, tc.want)
		}
	}
}

func TestStates(t *testing.T) {
	j, err := New(1, Spec{Seeds: []string{"http://a.test/"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if was, err := j.SetPaused(true); err != nil || was != Running {
		t.Fatalf("SetPaused(true) = %s, %v; want running, nil", was, err)
	}
	if st, _ := j.State(); st != Paused {
		t.Fatalf("after SetPaused(true): %s, want paused", st)
	}
	if was, ok := j.End(Cancelled, ReasonCancelled, nil); !ok || was != Paused {
		t.Fatalf("End on a paused job = %s, %v; want paused, true", was, ok)
	}
	if _, ok := j.End(Finished, ReasonExhausted, nil); ok {
		t.Error("a second End = true, want false (the first end wins)")
	}
	if st, why := j.State(); st != Cancelled || why != ReasonCancelled {
		t.Errorf("State() = %s, %s; want cancelled, cancelled", st, why)
	}
	select {
	case <-j.Ended():
	default:
		t.Error("Ended() not closed after End")
	}
	if _, err := j.SetPaused(false); !errors.Is(err, ErrEnded) {
		t.Errorf("SetPaused on an ended job = %v, want ErrEnded", err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	j, err := New(7, Spec{Name: "news", Seeds: []string{"http://a.test/"}, MaxPages: 5, Priority: 1, RobotsGiveUp: time.Minute}, created)
	if err != nil {
		t.Fatal(err)
	}
	j.SetPaused(true)
	rec, err := DecodeRecord(j.Record().Encode())
	if err != nil {
		t.Fatal(err)
	}
	back, err := Restore(rec)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := back.State(); st != Paused || back.ID != 7 || !back.Created.Equal(created) || back.Spec.MaxPages != 5 || back.Spec.RobotsGiveUp != time.Minute {
		t.Errorf("restored job = %+v (state %s), want job 7 paused as stored", back.Record(), st)
	}

	j.End(Failed, ReasonError, errors.New("disk full"))
	rec, _ = DecodeRecord(j.Record().Encode())
	back, _ = Restore(rec)
	if st, why := back.State(); st != Failed || why != ReasonError || back.Err() == nil || back.Err().Error() != "disk full" {
		t.Errorf("restored failed job: %s, %s, %v", st, why, back.Err())
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	for _, v := range []string{``, `{}`, `{"id":1,"spec":{},"surprise":1}`, `{"id":0}`, `[`} {
		if _, err := DecodeRecord([]byte(v)); err == nil {
			t.Errorf("DecodeRecord(%q) = nil error, want one", v)
		}
	}
}

func TestStatsSnapshot(t *testing.T) {
	j, _ := New(1, Spec{Seeds: []string{"http://a.test/"}}, time.Now())
	t0 := time.Unix(1000, 0)
	j.Stats.Start(t0)
	j.Stats.Pages.Add(10)
	j.Stats.AddStatus(200)
	j.Stats.AddStatus(404)
	j.Stats.AddError("")
	if !j.Stats.GaveUp("x.test") || j.Stats.GaveUp("x.test") {
		t.Error("GaveUp(host) should be new once")
	}
	p := j.Stats.Snapshot(t0.Add(2 * time.Second))
	if p.Pages != 10 || p.PagesPerSecond != 5 || p.Status["2xx"] != 1 || p.Status["4xx"] != 1 || p.Errors["other"] != 1 ||
		p.RobotsGaveUp != 2 || p.RobotsGaveUpOn != 1 {
		t.Errorf("Snapshot = %+v", p)
	}
}

// TestValidateFieldErrors: each rejected field comes as a *FieldError
// naming it as Spec does (and the element of a list), with words that read
// after any door's name for the field: no package prefix, no Go names.
func TestValidateFieldErrors(t *testing.T) {
	seed := []string{"http://a.test/"}
	for _, c := range []struct {
		spec  Spec
		field string
		index int
		why   string
	}{
		{Spec{}, "Seeds", -1, "at least one seed URL is needed"},
		{Spec{Seeds: []string{"http://a.test/", "ftp://a.test/"}}, "Seeds", 1, `"ftp://a.test/" is not an http or https URL`},
		{Spec{Seeds: []string{"/x"}}, "Seeds", 0, `"/x" is not an absolute http or https URL`},
		// A seed outside the crawl's own domains is refused at creation
		// as it is when added later.
		{Spec{Seeds: []string{"http://a.test/", "http://b.test/"}, Domains: []string{"a.test"}}, "Seeds", 1,
			`"http://b.test/" is outside the crawl's domains (a.test)`},
		{Spec{Seeds: seed, Domains: []string{"a.test", "a b"}}, "Domains", 1, `"a b" is not a host name`},
		{Spec{Seeds: seed, MaxDepth: -1}, "MaxDepth", -1, "-1 is negative: want 0 (no limit) or more"},
		{Spec{Seeds: seed, MaxPages: -1}, "MaxPages", -1, "-1 is negative: want 0 (no limit) or more"},
		{Spec{Seeds: seed, Priority: 2}, "Priority", -1, "2: want -1 (low), 0 (normal) or 1 (high)"},
		{Spec{Seeds: seed, RobotsGiveUp: -time.Second}, "RobotsGiveUp", -1, "-1s is negative: want 0 (never) up to a year"},
		{Spec{Seeds: seed, RobotsGiveUp: 400 * 24 * time.Hour}, "RobotsGiveUp", -1, "9600h0m0s is over a year: want 0 (never) up to a year"},
		{Spec{Seeds: seed, RecrawlMin: time.Hour}, "RecrawlMin", -1, "1h0m0s: only a continuous crawl recrawls: set {Continuous}"},
		{Spec{Seeds: seed, Continuous: true, RecrawlMin: 2 * time.Hour, RecrawlMax: time.Hour}, "RecrawlMin", -1, "2h0m0s is above {RecrawlMax} 1h0m0s"},
		{Spec{Seeds: seed, SessionParams: []string{"sid", "a=b"}}, "SessionParams", 1, `"a=b" is not a parameter name`},
		{Spec{Seeds: seed, Exclude: []string{"ok", "("}}, "Exclude", 1, `"(" is not a regular expression`},
		{Spec{Seeds: seed, Requisites: "page"}, "Requisites", -1, `"page" is not a reach: want host, site or any (or none)`},
		{Spec{Seeds: seed, RequisiteHops: 2}, "RequisiteHops", -1, "2: only a crawl that fetches requisites counts their hops: set {Requisites}"},
		{Spec{Seeds: seed, Requisites: RequisitesAny, RequisiteHops: 11}, "RequisiteHops", -1, "11: want 0 (the default, 3) up to 10"},
		{Spec{Seeds: seed, Purpose: "training"}, "Purpose", -1, `"training" is not a purpose: want archive, search, ai-train or ai-input (or none)`},
		{Spec{Seeds: seed, OnDenied: DeniedSkip}, "OnDenied", -1, `"skip": only a crawl that states its purpose honours what sites deny: set {Purpose}`},
		{Spec{Seeds: seed, Purpose: PurposeAITrain, OnDenied: "drop"}, "OnDenied", -1, `"drop": want mark (archive and mark; the default) or skip (do not archive)`},
	} {
		err := c.spec.Validate()
		fes := FieldErrors(err)
		if len(fes) != 1 {
			t.Errorf("Validate(%+v) = %v; want one *FieldError for %s", c.spec, err, c.field)
			continue
		}
		fe := fes[0]
		if fe.Field != c.field || fe.Index != c.index || !strings.HasPrefix(fe.Why, c.why) {
			t.Errorf("Validate(%+v) = %s[%d] %q; want %s[%d] %q", c.spec, fe.Field, fe.Index, fe.Why, c.field, c.index, c.why)
		}
	}
}

func TestRequisiteReach(t *testing.T) {
	for _, c := range []struct {
		reach, from, host string
		want              bool
	}{
		{"", "a.example", "a.example", false},
		{RequisitesHost, "a.example", "a.example", true},
		{RequisitesHost, "a.example", "A.example", true},
		{RequisitesHost, "a.example", "cdn.a.example", false},
		{RequisitesHost, "a.example:8080", "a.example:8081", false},
		{RequisitesSite, "www.a.example", "cdn.a.example", true},
		{RequisitesSite, "www.a.co.uk", "img.a.co.uk", true},
		{RequisitesSite, "a.co.uk", "b.co.uk", false},
		{RequisitesSite, "127.0.0.1:8080", "127.0.0.1:9090", true},
		{RequisitesSite, "127.0.0.1", "127.0.0.2", false},
		{RequisitesAny, "a.example", "fonts.other.test", true},
	} {
		if got := (Spec{Requisites: c.reach}).RequisiteInReach(c.from, c.host); got != c.want {
			t.Errorf("reach %q: from %s to %s = %v, want %v", c.reach, c.from, c.host, got, c.want)
		}
	}
	if h := (Spec{}).MaxRequisiteHops(); h != 0 {
		t.Errorf("no requisites: %d hops, want 0", h)
	}
	if h := (Spec{Requisites: RequisitesHost}).MaxRequisiteHops(); h != DefaultRequisiteHops {
		t.Errorf("requisites, hops unset: %d, want the default %d", h, DefaultRequisiteHops)
	}
}

// TestFieldErrorIn: a door names the other fields a message refers to in
// its own words; braces in a value quoted in the message stay as they are.
func TestFieldErrorIn(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ToLower(f) }
	for _, c := range []struct{ why, want string }{
		{"1h0m0s: only a continuous crawl recrawls: set {Continuous}", "1h0m0s: only a continuous crawl recrawls: set --continuous"},
		{"2h0m0s is above {RecrawlMax} 1h0m0s", "2h0m0s is above --recrawlmax 1h0m0s"},
		{`"a{2}{Seeds" is not a regular expression`, `"a{2}{Seeds" is not a regular expression`},
		{`{2}{Name} and {Priority}`, `{2}--name and --priority`},
		{`"http://a.test/{x}/{Name" is not a URL {`, `"http://a.test/{x}/{Name" is not a URL {`},
		{"", ""},
	} {
		if got := (&FieldError{"RecrawlMin", -1, c.why}).In(flag); got != c.want {
			t.Errorf("In(%q) = %q, want %q", c.why, got, c.want)
		}
	}
}

// TestDefaults: the defaults every door starts from are valid with seeds,
// and each is what its field's comment says.
func TestDefaults(t *testing.T) {
	d := Defaults()
	if d.MaxDepth != DefaultMaxDepth || DefaultMaxDepth != 20 || d.RobotsGiveUp != DefaultRobotsGiveUp || DefaultRobotsGiveUp != 15*time.Second {
		t.Errorf("Defaults() = %+v, want MaxDepth 20 and RobotsGiveUp 15s", d)
	}
	d.Seeds = []string{"http://a.test/"}
	if err := d.Validate(); err != nil {
		t.Errorf("Defaults() with a seed: %v", err)
	}
}

func TestSpecTrapRules(t *testing.T) {
	const ses = "9F86D081884C7D65"
	sid, _ := url.Parse("http://a.test/p.html?sid=" + ses + "&token=" + ses)
	for _, tc := range []struct {
		name      string
		spec      Spec
		limit     int
		stripped  string
		wantField string // a FieldError's field, or ""
	}{
		{"defaults", Spec{}, scope.DefaultMaxURLsPerPattern, "http://a.test/p.html?token=" + ses, ""},
		{"budget off", Spec{MaxURLsPerPattern: -1}, 0, "http://a.test/p.html?token=" + ses, ""},
		{"own budget", Spec{MaxURLsPerPattern: 500}, 500, "http://a.test/p.html?token=" + ses, ""},
		{"own session names", Spec{SessionParams: []string{"token"}}, scope.DefaultMaxURLsPerPattern, "http://a.test/p.html?sid=" + ses, ""},
		{"keep session IDs", Spec{KeepSessionIDs: true}, scope.DefaultMaxURLsPerPattern, "http://a.test/p.html?sid=" + ses + "&token=" + ses, ""},
		{"bad session name", Spec{SessionParams: []string{"a=b"}}, 0, "", "SessionParams"},
	} {
		tc.spec.Seeds = []string{"http://a.test/"}
		j, err := New(1, tc.spec, time.Time{})
		if tc.wantField != "" {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.wantField {
				t.Errorf("%s: New = %v, want a FieldError for %s", tc.name, err, tc.wantField)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := j.Scope.PatternLimit(); got != tc.limit {
			t.Errorf("%s: PatternLimit = %d, want %d", tc.name, got, tc.limit)
		}
		if got := j.Scope.StripSession(sid).String(); got != tc.stripped {
			t.Errorf("%s: StripSession = %q, want %q", tc.name, got, tc.stripped)
		}
	}
}

// TestSnapshotRecrawls: a continuous job's snapshot says so, carries the
// recrawl counters, and the schedule's freshness once it is set.
func TestSnapshotRecrawls(t *testing.T) {
	for _, c := range []struct {
		name       string
		continuous bool
		fresh      *Freshness
	}{
		{"one-off", false, nil},
		{"continuous before the first scan", true, nil},
		{"continuous with figures", true, &Freshness{At: time.Unix(2000, 0), Scheduled: 40, Due: 5, Overdue: 2, Freshness: 0.9, MeanAge: 90 * time.Minute}},
	} {
		j, err := New(1, Spec{Seeds: []string{"http://a.test/"}, Continuous: c.continuous}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		j.Stats.Recrawls.Add(7)
		j.Stats.NotModified.Add(4)
		j.Stats.Changed.Add(2)
		if c.fresh != nil {
			j.Stats.SetFreshness(*c.fresh)
		}
		p := j.Stats.Snapshot(time.Now())
		if p.Continuous != c.continuous || p.Recrawls != 7 || p.NotModified != 4 || p.Changed != 2 || p.Total.Recrawls != 7 {
			t.Errorf("%s: Snapshot = continuous %v, recrawls %d/%d/%d (total %d); want %v, 7/4/2 (7)",
				c.name, p.Continuous, p.Recrawls, p.NotModified, p.Changed, p.Total.Recrawls, c.continuous)
		}
		switch {
		case c.fresh == nil && p.Freshness != nil:
			t.Errorf("%s: Freshness = %+v, want none", c.name, *p.Freshness)
		case c.fresh != nil && (p.Freshness == nil || p.Freshness.Due != c.fresh.Due || p.Freshness.MeanAgeSeconds != 5400):
			t.Errorf("%s: Freshness = %+v, want %+v with mean_age_s 5400", c.name, p.Freshness, *c.fresh)
		}
	}
}

func TestWaitingForRecrawls(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want bool
	}{
		{Progress{Continuous: true}, true},
		{Progress{Continuous: false}, false},
		{Progress{Continuous: true, Queued: 1}, false},
		{Progress{Continuous: true, InFlight: 1}, false},
		{Progress{Continuous: true, Held: 1}, false},
		{Progress{Continuous: true, Dropped: 3}, true},
	} {
		if got := c.p.WaitingForRecrawls(); got != c.want {
			t.Errorf("Progress{continuous %v, queued %d, in flight %d, held %d}.WaitingForRecrawls() = %v, want %v",
				c.p.Continuous, c.p.Queued, c.p.InFlight, c.p.Held, got, c.want)
		}
	}
}

// FuzzDecodeRecord: a stored or replicated job record (the fleet's
// catalog carries them between members) never panics the decoder or
// Restore, and what decodes re-encodes to a fixed point.
func FuzzDecodeRecord(f *testing.F) {
	created := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	f.Add(Record{ID: 1, Spec: Spec{Name: "fleet", Seeds: []string{"http://a.test/"}, Domains: []string{"a.test"}, MaxDepth: 3}, Created: created, State: Running}.Encode())
	f.Add(Record{ID: 7, Spec: Spec{Seeds: []string{"https://b.test/x"}, Continuous: true, RecrawlMin: time.Hour}, Created: created, State: Paused}.Encode())
	f.Add(Record{ID: 2, Spec: Spec{Seeds: []string{"http://c.test/"}}, Created: created, State: Cancelled, Reason: "cancelled", Error: "x"}.Encode())
	f.Add([]byte(`{"id":3,"spec":{"seeds":[]},"created":"2026-12-02T10:00:00+02:00","state":"finished"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		_, _ = Restore(r) // an invalid spec is an error, never a panic
		once := r.Encode()
		r2, err := DecodeRecord(once)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", once, err)
		}
		if twice := r2.Encode(); string(twice) != string(once) {
			t.Fatalf("not a fixed point:\n%s\n%s", once, twice)
		}
	})
}

func TestWaitDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{450 * time.Millisecond, "450ms"}, {12 * time.Second, "12s"}, {59*time.Second + 600*time.Millisecond, "1m"},
		{59 * time.Minute, "59m"}, {59*time.Minute + 50*time.Second, "1h00m"}, {2*time.Hour + 5*time.Minute, "2h05m"},
	} {
		if got := WaitDuration(c.d); got != c.want {
			t.Errorf("WaitDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
