package harness

import (
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Fault is a set of the faults a machine's checks may draw.
type Fault uint32

// The faults of the catalogue that machines draw, one bit each in the
// order of the catalogue (faults.Catalog, the rows with an Explore name:
// the i-th is 1<<i); package faults has their full semantics.
const (
	// LoseReply: the server applies a request and the connection breaks
	// before the reply leaves.
	LoseReply Fault = 1 << iota
	// DropRequest: the connection breaks before the request reaches the
	// server.
	DropRequest
	// Shuffle: a getChildren answers its names in an order drawn from the
	// seed.
	Shuffle
	// Partition: a client's connection breaks until a Heal action
	// reconnects it; the session lives on until its timeout.
	Partition
	// Expire: the server expires a client's session.
	Expire
	// Pause: a client process stops (nothing sent, nothing heard, no
	// heartbeats) until a Resume action resumes it.
	Pause
	// Delay: what the server sends one client is held back for a while,
	// in order, while the others go on.
	Delay
	// Slow: the server takes longer over every request for a while.
	Slow
	// FailAuth: a client's next reconnection fails authentication and the
	// client is done for good (StateAuthFailed). Native clients only.
	FailAuth

	// The ensemble's faults, drawn only by a machine on an ensemble
	// (Machine.Members > 1); each strikes a member rapid draws.

	// Lag: a follower stops applying commits (its clients read stale
	// data, their writes and syncs wait) until a CatchUp action; meanwhile
	// each commit it applies is a step of the scheduler.
	Lag
	// Crash: a member crashes (its clients move to other members; a
	// crashed leader starts an election) until a Restart action.
	Crash
	// Isolate: a member is cut off from the quorum (its clients move on;
	// an isolated leader starts an election) until a Rejoin action.
	Isolate
	// FailLeader: the leader fails as the next write reaches it, the
	// write committed or lost (drawn from the World's seed); every client
	// loses its connection and an election follows.
	FailLeader

	// NoFaults leaves only scheduling and the passing of time.
	NoFaults Fault = 1 << 31
	// AllFaults is every fault above (a machine on a standalone server
	// draws none of the ensemble's).
	AllFaults = LoseReply | DropRequest | Shuffle | Partition | Expire | Pause | Delay | Slow | FailAuth |
		Lag | Crash | Isolate | FailLeader
)

// faultRow is a row of the catalogue (faults.Catalog) that machines draw,
// and its bit among a machine's Faults.
type faultRow struct {
	fault Fault
	faults.Entry
}

// faultTable lists the faults machines draw, in the order of the
// catalogue: the i-th is the fault 1<<i (the constants above name them).
var faultTable = machineFaults()

// fateRows are the request faults of faultTable, which a Step action draws
// for the request it admits.
var fateRows = requestFaults()

// noFate is how many of the fates a Step action draws from are none: most
// often a request meets no fault.
const noFate = 3

func machineFaults() []faultRow {
	var rows []faultRow
	for _, e := range faults.Catalog() {
		if e.Explore.Name != "" {
			rows = append(rows, faultRow{fault: 1 << len(rows), Entry: e})
		}
	}
	if len(rows) > 31 {
		panic("harness: more than 31 faults in the catalogue")
	}
	return rows
}

func requestFaults() []faultRow {
	var rows []faultRow
	for _, r := range faultTable {
		if !r.Step {
			rows = append(rows, r)
		}
	}
	return rows
}

// nativeOnly returns the faults of the table that are not for go-zookeeper
// clients.
func nativeOnly() Fault {
	var f Fault
	for _, r := range faultTable {
		if r.Explore.NativeOnly {
			f |= r.fault
		}
	}
	return f
}

// String names the faults of f.
func (f Fault) String() string {
	if f&NoFaults != 0 {
		return "none"
	}
	var names []string
	for _, r := range faultTable {
		if f&r.fault != 0 {
			names = append(names, r.Explore.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// ensembleOnly returns the faults of the table that strike an ensemble's
// members.
func ensembleOnly() Fault {
	var f Fault
	for _, r := range faultTable {
		if r.Ensemble {
			f |= r.fault
		}
	}
	return f
}

// drawMix draws the faults of one check among allowed: each fault of the
// table is in with probability one half, so checks differ in their mix
// and each meets few kinds often (swarm testing, Groce et al., ISSTA 2012).
// allowed holds no fault of the ensemble's on a standalone server (see
// Machine.withDefaults): the draws are those of a table without them.
func drawMix(t *rapid.T, allowed Fault) Fault {
	if allowed&NoFaults != 0 {
		return 0
	}
	var mix Fault
	for _, r := range faultTable {
		if allowed&r.fault != 0 && rapid.Bool().Draw(t, "fault "+r.Explore.Name) {
			mix |= r.fault
		}
	}
	return mix
}

// drawFate draws the fate of request r admitted by a Step action: most
// often none, else one of the request faults of mix (a fault outside the
// mix, or one that cannot strike r, such as ShuffleChildren for a request
// other than a getChildren, is none). The list drawn from is the same
// whatever the mix, so that a draw means the same fate when rapid turns a
// fault off as it shrinks.
func drawFate(t *rapid.T, mix Fault, r *zkmem.Request) sim.Fate {
	i := rapid.IntRange(0, noFate+len(fateRows)-1).Draw(t, "fate")
	if i < noFate || mix&fateRows[i-noFate].fault == 0 {
		return sim.Fate{}
	}
	return fateRows[i-noFate].Fate(r)
}

// explorer draws the parameters of a fault action (faults.Explorer).
type explorer struct {
	t       *rapid.T
	timeout time.Duration
}

func (x explorer) SessionTimeout() time.Duration { return x.timeout }

func (x explorer) Pick(what string, ds ...time.Duration) time.Duration {
	return rapid.SampledFrom(ds).Draw(x.t, what)
}
