package conformance

import (
	"github.com/zksim/zksim/zktest"
)

// Backend describes a zksim implementation to the suite. It is a
// zktest.Backend (how to open sessions, which test controls it has, the
// server's settings as zkmem.Options) plus what is the suite's own: the
// cases to skip or to run alone. zktest.OpenMem and zktest.OpenReal open
// the project's two; another implementation fills in a zktest.Backend by
// hand. Only Name and Connect are required; zero Facts fields mean
// ZooKeeper's defaults, as in zkmem.Options. A nil control makes the cases
// that need it skip, saying so.
//
// The suite closes every Conn it opened when the case ends. Connect is
// asked for timeouts within [Facts.MinSessionTimeout,
// Facts.MaxSessionTimeout].
type Backend struct {
	zktest.Backend

	// Skip lists cases this backend cannot run, by name ("group/case", as
	// CaseNames returns), each with the exact reason, which the skip
	// message repeats. It is for limits of a client library (say, a
	// path check stricter than the server's), not for hiding bugs. Run
	// fails on a name that is not a case.
	Skip map[string]string

	// Only, when not nil, restricts Run to these cases (names as CaseNames
	// returns); the others are not run at all. It is for a second, narrow
	// run against a differently configured server (say, one with TTL nodes
	// off). Run fails on a name that is not a case.
	Only []string
}
