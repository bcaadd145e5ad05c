package hostpolicy

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     Policy
		field string // "" if valid
	}{
		{"zero", Policy{}, ""},
		{"all set", Policy{MinDelay: 250 * time.Millisecond, HasMinDelay: true, MaxParallel: 4, Paused: true}, ""},
		{"zero delay set", Policy{HasMinDelay: true}, ""},
		{"longest delay", Policy{MinDelay: MaxMinDelay, HasMinDelay: true}, ""},
		{"negative delay", Policy{MinDelay: -time.Millisecond, HasMinDelay: true}, "MinDelay"},
		{"delay too long", Policy{MinDelay: MaxMinDelay + time.Millisecond, HasMinDelay: true}, "MinDelay"},
		{"sub-millisecond delay", Policy{MinDelay: 1500 * time.Microsecond, HasMinDelay: true}, "MinDelay"},
		{"delay without flag", Policy{MinDelay: time.Second}, "MinDelay"},
		{"negative parallel", Policy{MaxParallel: -1}, "MaxParallel"},
		{"parallel too high", Policy{MaxParallel: MaxParallelCap + 1}, "MaxParallel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate = %v, want a FieldError naming %s", err, tc.field)
			}
		})
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, p := range []Policy{
		{},
		{Paused: true},
		{HasMinDelay: true},
		{MinDelay: 90 * time.Second, HasMinDelay: true},
		{MaxParallel: 3},
		{MinDelay: MaxMinDelay, HasMinDelay: true, MaxParallel: MaxParallelCap, Paused: true},
	} {
		b := p.Encode()
		got, err := Decode(b)
		if err != nil || got != p {
			t.Errorf("Decode(Encode(%+v)) = %+v, %v", p, got, err)
		}
		if !bytes.Equal(got.Encode(), b) {
			t.Errorf("%+v: encoding not stable", p)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":            nil,
		"short":            {version},
		"version":          {2, 0},
		"unknown flag":     {version, 1 << 5},
		"delay cut off":    {version, flagMinDelay},
		"delay too long":   nil, // built below
		"parallel zero":    {version, flagMaxParallel, 0},
		"parallel too big": {version, flagMaxParallel, MaxParallelCap + 1},
		"trailing":         {version, flagPaused, 7},
	} {
		if name == "delay too long" {
			b = Policy{}.Encode()
			b[1] = flagMinDelay
			b = appendUvarint(b, uint64(MaxMinDelay/time.Millisecond)+1)
		}
		if _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode(%x) = %v, want ErrMalformed", name, b, err)
		}
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func FuzzDecode(f *testing.F) {
	f.Add(Policy{MinDelay: time.Second, HasMinDelay: true, MaxParallel: 2, Paused: true}.Encode())
	f.Add([]byte{version, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Decode accepted an invalid policy %+v: %v", p, err)
		}
		if !bytes.Equal(p.Encode(), b) {
			t.Fatalf("Decode(%x) = %+v, which encodes as %x", b, p, p.Encode())
		}
	})
}
