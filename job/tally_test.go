package job

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func sampleTally() Tally {
	return Tally{Pages: 10, Shared: 2, Requests: 14, RobotsFetches: 3, RobotsDisallowed: 1, RobotsGaveUp: 0,
		Bytes: 123456, Discovered: 40, OutOfScope: 7, Excluded: 5, BadLinks: 1,
		Status: map[string]int64{"2xx": 9, "4xx": 1}, Errors: map[string]int64{"timeout": 2}}
}

func TestTallyEncodeDecode(t *testing.T) {
	for _, tl := range []Tally{{Status: map[string]int64{}, Errors: map[string]int64{}}, sampleTally()} {
		b := tl.Encode()
		got, err := DecodeTally(b)
		if err != nil || !reflect.DeepEqual(got, tl) {
			t.Errorf("DecodeTally(Encode(%+v)) = %+v, %v", tl, got, err)
		}
		if !bytes.Equal(got.Encode(), b) {
			t.Errorf("%+v: encoding not stable", tl)
		}
	}
}

// TestTallyNewerCounters: a tally written with more fixed counters than
// this version knows decodes, the extra ones skipped.
func TestTallyNewerCounters(t *testing.T) {
	tl := sampleTally()
	b := []byte{tallyVersion, byte(len(tl.fields()) + 2)}
	for _, p := range tl.fields() {
		b = appendUvarint(b, uint64(*p))
	}
	b = append(b, 99, 98)                    // two counters from the future
	b = append(b, 1, 3, '2', 'x', 'x', 9, 0) // status {2xx: 9}, errors {}
	got, err := DecodeTally(b)
	if err != nil || got.Pages != tl.Pages || got.BadLinks != tl.BadLinks || got.Status["2xx"] != 9 {
		t.Fatalf("DecodeTally = %+v, %v", got, err)
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestTallyRejects(t *testing.T) {
	good := sampleTally().Encode()
	for name, b := range map[string][]byte{
		"empty":    nil,
		"version":  append([]byte{2}, good[1:]...),
		"cut":      good[:len(good)-1],
		"trailing": append(append([]byte{}, good...), 0),
		"key cut":  {tallyVersion, 0, 1, 50, 'a'},
	} {
		if _, err := DecodeTally(b); !errors.Is(err, ErrBadTally) {
			t.Errorf("%s: DecodeTally = %v, want ErrBadTally", name, err)
		}
	}
}

func TestTallyAdd(t *testing.T) {
	a, b := sampleTally(), sampleTally()
	b.Errors = map[string]int64{"dns": 1}
	s := a.Add(b)
	if s.Pages != 20 || s.Bytes != 246912 || s.Status["2xx"] != 18 || s.Errors["timeout"] != 2 || s.Errors["dns"] != 1 {
		t.Errorf("Add = %+v", s)
	}
	if a.Status["2xx"] != 9 {
		t.Error("Add changed its receiver's map")
	}
}

// TestStatsTotal: a job's total is its prior runs' tally plus this run.
func TestStatsTotal(t *testing.T) {
	var s Stats
	s.init()
	s.SetPrior(sampleTally())
	s.Pages.Add(1)
	s.AddStatus(200)
	s.AddError("dns")
	tot := s.Total()
	if tot.Pages != 11 || tot.Status["2xx"] != 10 || tot.Errors["dns"] != 1 || tot.Errors["timeout"] != 2 {
		t.Errorf("Total = %+v", tot)
	}
	if run := s.Run(); run.Pages != 1 || run.Status["2xx"] != 1 {
		t.Errorf("Run = %+v", run)
	}
}

func FuzzDecodeTally(f *testing.F) {
	f.Add(sampleTally().Encode())
	f.Add(Tally{}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := DecodeTally(b)
		if err != nil {
			return
		}
		back, err := DecodeTally(tl.Encode())
		if err != nil || !reflect.DeepEqual(back, tl) {
			t.Fatalf("re-encoding %+v: %+v, %v", tl, back, err)
		}
	})
}

// TestEncodeTotal: EncodeTotal writes what Total().Encode() writes, keys
// of the prior tally and of this run's maps merged, whichever has them.
func TestEncodeTotal(t *testing.T) {
	var s Stats
	s.init()
	check := func(when string) {
		t.Helper()
		if got, want := s.EncodeTotal(), s.Total().Encode(); !bytes.Equal(got, want) {
			t.Errorf("%s: EncodeTotal = %x, want %x", when, got, want)
		}
	}
	check("empty")
	s.Pages.Add(3)
	s.AddStatus(200)
	s.AddError("dns")
	check("no prior")
	s.SetPrior(sampleTally())
	check("prior")
	s.AddStatus(404)
	s.AddStatus(503)
	s.AddError("timeout")
	s.Requisites.Add(2)
	check("keys in both")
	for i := range 40 { // more keys than appendSum's buffer
		s.AddError(fmt.Sprint("class", i))
	}
	check("many keys")
}

// BenchmarkEncodeTotal: the tally a completion stores, from a job's
// stats with a prior run (Total().Encode() before EncodeTotal).
func BenchmarkEncodeTotal(b *testing.B) {
	var s Stats
	s.init()
	s.SetPrior(sampleTally())
	for _, c := range []int{200, 200, 301, 404, 500} {
		s.AddStatus(c)
	}
	s.AddError("dns")
	s.AddError("timeout")
	b.Run("Total.Encode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = s.Total().Encode()
		}
	})
	b.Run("EncodeTotal", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = s.EncodeTotal()
		}
	})
}
