package benchmarks_test

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/benchmarks"
)

// TestHerdSmall runs every variant with 10 and 100 candidates and checks the
// shape of the result: with predecessor watches a leader change costs the
// same few notifications and reads whatever N is; with watches on every
// candidate (or on a single leader node) every waiter is notified, so the
// cost grows with N.
func TestHerdSmall(t *testing.T) {
	defer goleak.VerifyNone(t)
	const changes = 3
	results := map[string]map[int]benchmarks.HerdResult{}
	for _, v := range benchmarks.Variants {
		results[v.Name] = map[int]benchmarks.HerdResult{}
		for _, n := range []int{10, 100} {
			r := benchmarks.MeasureHerd(t, v, n, changes, 1)
			if len(r.Changes) != changes {
				t.Fatalf("%s n=%d: %d changes measured, want %d", v.Name, n, len(r.Changes), changes)
			}
			results[v.Name][n] = r
		}
	}
	for _, name := range []string{"election-predecessor", "lock-predecessor"} {
		for n, r := range results[name] {
			for k, c := range r.Changes {
				// The next in line is notified (and, for the lock, the
				// releasing holder's own watch on its node fires); it lists
				// the directory, reads its node and watches it.
				if c.Notifications > 2 || c.Reads > 4 {
					t.Errorf("%s n=%d change %d: %d notifications, %d reads; want O(1): at most 2 and 4", name, n, k, c.Notifications, c.Reads)
				}
			}
		}
		small, _, _, _, _ := results[name][10].Mean()
		big, _, _, _, _ := results[name][100].Mean()
		if small != big {
			t.Errorf("%s: %.1f notifications per change at N=10, %.1f at N=100; want the same", name, small, big)
		}
	}
	for _, name := range []string{"election-herd", "election-single-node", "lock-herd"} {
		for n, r := range results[name] {
			for k, c := range r.Changes {
				if waiters := int64(n - 1 - k); c.Notifications < waiters || c.Reads < waiters {
					t.Errorf("%s n=%d change %d: %d notifications, %d reads; want every one of the %d waiters woken and reading",
						name, n, k, c.Notifications, c.Reads, waiters)
				}
			}
		}
		small, _, _, _, _ := results[name][10].Mean()
		big, _, _, _, _ := results[name][100].Mean()
		if big < 5*small {
			t.Errorf("%s: %.1f notifications per change at N=10, %.1f at N=100; want growth with N", name, small, big)
		}
	}
	_, _, _, _, pred := results["election-predecessor"][100].Mean()
	_, _, _, _, herd := results["election-herd"][100].Mean()
	if herd <= pred {
		t.Errorf("failover at N=100: herd %v, predecessor %v; want the herd slower under the cost model", herd, pred)
	}
}

// BenchmarkHerd runs the herd measurement as Go benchmarks: one iteration
// is a whole run (the World, N candidates, one leader change), so ns/op is
// mostly setting up; the figures of interest are the custom metrics, which
// are those of the change and the same on every run:
//
//	go test ./benchmarks -run '^$' -bench Herd
//	go test ./benchmarks -run '^$' -bench 'Herd/.*/n=1000$'
//
// At N=10,000 one iteration takes from seconds to a minute, depending on
// the variant; the report (TestHerdReport) runs the variants two at a time.
func BenchmarkHerd(b *testing.B) {
	for _, v := range benchmarks.Variants {
		b.Run(v.Name, func(b *testing.B) {
			for _, n := range []int{10, 100, 1000, 10000} {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					var r benchmarks.HerdResult
					for b.Loop() {
						inBubble(b, func(t *testing.T) { r = benchmarks.MeasureHerd(t, v, n, 1, 1) })
					}
					notifications, reads, bytes, _, failover := r.Mean()
					b.ReportMetric(notifications, "notifications/change")
					b.ReportMetric(reads, "reads/change")
					b.ReportMetric(bytes, "bytes/change")
					b.ReportMetric(float64(failover.Nanoseconds()), "ns/failover")
				})
			}
		})
	}
}

// inBubble runs f as a test from a benchmark: MeasureHerd needs a
// *testing.T for its synctest bubble. f runs once, although
// testing.RunTests repeats its tests -test.count times.
func inBubble(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	var once sync.Once
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: b.Name(), F: func(t *testing.T) { once.Do(func() { f(t) }) }}})
	if !ok {
		b.Fatal("the measurement failed")
	}
}
