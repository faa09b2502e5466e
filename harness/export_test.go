package harness

import (
	"flag"
	"testing"
	"time"
)

// SetRapidShrinkTimeDefault makes d rapid's default -rapid.shrinktime (its
// value and its default) until t ends, as if rapid bounded a shrink by d
// of wall-clock time unless told otherwise. The test must not be parallel.
func SetRapidShrinkTimeDefault(t *testing.T, d time.Duration) {
	t.Helper()
	f := flag.Lookup("rapid.shrinktime")
	oldValue, oldDefault := f.Value.String(), f.DefValue
	if err := f.Value.Set(d.String()); err != nil {
		t.Fatal(err)
	}
	f.DefValue = f.Value.String()
	t.Cleanup(func() {
		f.DefValue = oldDefault
		_ = f.Value.Set(oldValue)
	})
}
