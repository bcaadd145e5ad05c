package robotscache

import (
	"testing"
	"time"
)

// TestKeeperOriginStatus: Status reads what the store keeps of a host's
// origins: nothing at first, an outage's attempts, then a good copy.
func TestKeeperOriginStatus(t *testing.T) {
	db, c := memDB(t), newClock()
	k := newKeeper(t, db, c, KeeperOptions{})
	if st, err := k.Status(kHost); err != nil || len(st) != 0 {
		t.Fatalf("Status of an unknown host = %+v, %v", st, err)
	}
	fetch(t, k, Answer{Status: 503, At: c.Now()}, "")
	st, err := k.Status(kHost)
	if err != nil || len(st) != 1 {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if s := st[0]; s.Origin != kOrigin || s.Attempts != 1 || !s.OutageSince.Equal(c.Now()) || s.HasCopy || s.Pending {
		t.Errorf("after a 503: %+v", s)
	}
	c.Advance(time.Hour)
	fetch(t, k, Answer{Status: 200, Body: kBody, At: c.Now()}, "")
	st, err = k.Status(kHost)
	if err != nil || len(st) != 1 {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if s := st[0]; s.Attempts != 0 || !s.HasCopy || s.Status != 200 || !s.Fetched.Equal(c.Now()) || s.Err != "" {
		t.Errorf("after a 200: %+v", s)
	}
	if st, _ := k.Status("other.test"); len(st) != 0 {
		t.Errorf("Status of another host = %+v", st)
	}
}
