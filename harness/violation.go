package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Violation is a broken invariant, as a check found it.
type Violation struct {
	// Invariant is the name of the invariant broken: an Invariant's Name,
	// a name given to World.Violate, or one of the harness's own:
	// "liveness" (an Eventually condition still false at the bound) and
	// "livelock" (steps without time passing).
	Invariant string
	// Detail says what exactly happened.
	Detail string
	// At is the virtual time it was found at.
	At time.Duration
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at t=%v: %s", v.Invariant, v.At, v.Detail)
}

// failMessage is what a failing check fails with: the names of the
// invariants broken, sorted, and nothing that differs between two runs of
// one schedule, so that rapid shrinks a failure to the smallest schedule
// that breaks the same invariants.
func failMessage(vs []Violation) string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Invariant)
	}
	slices.Sort(names)
	return "VIOLATION: " + strings.Join(slices.Compact(names), ", ")
}
