package harness

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/sim"
)

// ExploreOptions tune Explore. The zero value is the default.
type ExploreOptions struct {
	// Echo, if set, receives rapid's logs as they come.
	Echo io.Writer
	// Started, if set, is called as each check starts, before its first
	// draw: by then rapid has read its flags (a caller that set
	// -rapid.seed for this run may let others set it again).
	Started func()
	// Traces, if set, receives the whole trace of every check as it ends,
	// in the order the checks ran, shrinking included.
	Traces func(trace string)
	// Checks, if set, caps the checks below -rapid.checks: once Checks
	// checks have run without a failure, the others pass at once, without
	// a draw (rapid still counts them as passed). For a machine whose share
	// of a suite run by -rapid.checks is smaller, without setting the flag
	// under parallel tests that read it.
	Checks int
}

// Explored is what Explore found.
type Explored struct {
	// Passed reports whether every check passed.
	Passed bool
	// Stats counts the checks up to the first failure (not those of the
	// shrinking).
	Stats
	// Coverage is the coverage of those checks' requests.
	Coverage sim.Coverage
	// Seed is rapid's seed that reproduces a failure (-rapid.seed).
	Seed uint64
	// Report is rapid's report of a failure: the invariants broken, and
	// how to replay it.
	Report string
	// Schedule is the shrunk schedule of a failure: the actions of the
	// minimal failing run, in order.
	Schedule []string
	// ShrinkChecks counts the checks run from the first failure to the
	// end of shrinking (at most Machine.ShrinkBudget, and one more when
	// its last check failed: rapid runs such a check twice).
	ShrinkChecks int
	// Logs is everything rapid logged, the minimal failing run's
	// violations, processes and trace included.
	Logs []string
}

// Explore explores m as Check does, from rapid's flags as they are, and
// reports what it found instead of failing t (t only hosts the synctest
// bubbles). It sets no flag of rapid's, so explorations of machines with
// Machine.Parallel may run at once, in parallel tests: the checks of one
// are the same whatever runs beside it. The shrinking of a failure is
// bounded by Machine.ShrinkBudget and by -rapid.shrinktime, rapid's 30s
// of wall-clock time unless set: set it to ShrinkCap before (the property
// suite's TestMain does; Check and Catch set it for themselves), or the
// shrunk schedule depends on how busy the machine is.
func Explore[P any](t *testing.T, m Machine[P], o ExploreOptions) Explored {
	t.Helper()
	r := newRunner(t, m)
	r.sink = o.Traces
	rec := &recorder{name: t.Name(), echo: o.Echo}
	prop := r.prop(nil)
	if o.Checks > 0 {
		inner, n := prop, 0 // rapid runs the checks one at a time
		prop = func(t *rapid.T) {
			r.mu.Lock()
			done := r.target == "" && n >= o.Checks
			r.mu.Unlock()
			if done {
				return
			}
			n++
			inner(t)
		}
	}
	if o.Started != nil {
		inner := prop
		prop = func(t *rapid.T) {
			o.Started()
			inner(t)
		}
	}
	rapid.Check(rec, prop)
	r.logTotals(rec)
	return r.explored(rec)
}

// explored sums up what rec and r saw.
func (r *runner[P]) explored(rec *recorder) Explored {
	res := Explored{Passed: !rec.Failed(), Report: strings.Join(rec.Errors(), "\n"), Logs: rec.Logs()}
	if m := reproduceSeed.FindStringSubmatch(res.Report); m != nil {
		res.Seed, _ = strconv.ParseUint(m[1], 10, 64)
	}
	r.mu.Lock()
	res.Stats, res.Coverage, res.ShrinkChecks = r.stats, r.cover, r.runs
	r.mu.Unlock()
	if best := r.minimal(); best != nil && !res.Passed {
		res.Schedule = best.actions
		if len(best.failure) > 0 && !contains(res.Logs, best.failure[0]) {
			// rapid's replay of the minimal run came after the budget
			res.Logs = append(res.Logs, best.failure...)
		}
	}
	return res
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
