package zkmem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// TestOptionsValidate: what a server cannot run with is an error naming
// the field, and NewServer refuses it (a panic with that error) instead of
// running with a default in its place or granting a timeout outside the
// bounds given.
func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts zkmem.Options
		want string // "" for valid; else a word of the error
	}{
		{"zero", zkmem.Options{}, ""},
		{"equal-bounds", zkmem.Options{MinSessionTimeout: 5 * time.Second, MaxSessionTimeout: 5 * time.Second}, ""},
		{"min-below-default-max", zkmem.Options{TickTime: time.Second, MinSessionTimeout: 20 * time.Second}, ""},
		{"negative-tick", zkmem.Options{TickTime: -time.Second}, "TickTime"},
		{"negative-min", zkmem.Options{MinSessionTimeout: -1}, "MinSessionTimeout"},
		{"negative-max", zkmem.Options{MaxSessionTimeout: -1}, "MaxSessionTimeout"},
		{"negative-container-check", zkmem.Options{ContainerCheckInterval: -time.Minute}, "ContainerCheckInterval"},
		{"negative-max-request", zkmem.Options{MaxRequestBytes: -1}, "MaxRequestBytes"},
		{"min-above-max", zkmem.Options{MinSessionTimeout: 10 * time.Second, MaxSessionTimeout: 5 * time.Second}, "MinSessionTimeout"},
		// With the default tick (2s) the default bound is 40s.
		{"min-above-default-max", zkmem.Options{MinSessionTimeout: 41 * time.Second}, "MinSessionTimeout"},
		{"max-below-default-min", zkmem.Options{TickTime: time.Second, MaxSessionTimeout: time.Second}, "MinSessionTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				zkmem.NewServer(tc.opts).Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
			defer func() {
				if r := recover(); r != err && (r == nil || r.(error).Error() != err.Error()) {
					t.Fatalf("NewServer panicked with %v, want %v", r, err)
				}
			}()
			zkmem.NewServer(tc.opts).Close()
			t.Fatal("NewServer accepted what Validate refuses")
		})
	}
}

// TestSessionTimeoutWithinBounds: equal bounds grant exactly that timeout,
// whatever the client asks.
func TestSessionTimeoutWithinBounds(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{MinSessionTimeout: 5 * time.Second, MaxSessionTimeout: 5 * time.Second})
	defer srv.Close()
	for _, ask := range []time.Duration{time.Second, 5 * time.Second, 10 * time.Second} {
		c, err := srv.Connect(zkmem.WithSessionTimeout(ask))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.SessionTimeout(); got != 5*time.Second {
			t.Errorf("asked %v, granted %v, want 5s", ask, got)
		}
		c.Close()
	}
}
