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

// The faults of the catalogue (package faults has their full semantics).
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

	// NoFaults leaves only scheduling and the passing of time.
	NoFaults Fault = 1 << 31
	// AllFaults is every fault above.
	AllFaults = LoseReply | DropRequest | Shuffle | Partition | Expire | Pause | Delay | Slow | FailAuth
)

// faultRow is one row of the harness's fault table: the fault, its name,
// the action that injects it (nil for the request faults, which the Step
// action draws for the request it admits), and the action that ends it,
// if it lasts until one does.
type faultRow struct {
	fault  Fault
	name   string
	action func(w *runWorld, t *rapid.T)
	end    string
	undo   func(w *runWorld, t *rapid.T)
}

// faultTable lists the faults in the order the swarm draws them.
var faultTable = []faultRow{
	{LoseReply, "LoseReply", nil, "", nil},
	{DropRequest, "DropRequest", nil, "", nil},
	{Shuffle, "Shuffle", nil, "", nil},
	{Partition, "Partition", (*runWorld).partition, "Heal", (*runWorld).heal},
	{Expire, "Expire", func(w *runWorld, t *rapid.T) {
		w.inject(t, faults.Expire(w.drawSession(t, w.all())))
	}, "", nil},
	{Pause, "Pause", (*runWorld).pause, "Resume", (*runWorld).resume},
	{Delay, "Delay", func(w *runWorld, t *rapid.T) {
		s := w.drawSession(t, w.all())
		d := rapid.SampledFrom([]time.Duration{w.timeout / 10, w.timeout / 2}).Draw(t, "for")
		w.inject(t, faults.Delay(s, d))
	}, "", nil},
	{Slow, "Slow", func(w *runWorld, t *rapid.T) {
		extra := rapid.SampledFrom([]time.Duration{w.timeout / 50, w.timeout * 3 / 10}).Draw(t, "extra")
		d := rapid.SampledFrom([]time.Duration{w.timeout / 2, 3 * w.timeout}).Draw(t, "for")
		w.inject(t, faults.SlowServer(extra, d))
	}, "", nil},
	{FailAuth, "FailAuth", func(w *runWorld, t *rapid.T) {
		w.inject(t, faults.FailAuth(w.drawSession(t, w.all())))
	}, "", nil},
}

// String names the faults of f.
func (f Fault) String() string {
	if f&NoFaults != 0 {
		return "none"
	}
	var names []string
	for _, r := range faultTable {
		if f&r.fault != 0 {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// drawMix draws the faults of one check among allowed: each fault of the
// table is in with probability one half, so checks differ in their mix
// and each meets few kinds often (swarm testing, Groce et al., ISSTA 2012).
func drawMix(t *rapid.T, allowed Fault) Fault {
	if allowed&NoFaults != 0 {
		return 0
	}
	var mix Fault
	for _, r := range faultTable {
		if allowed&r.fault != 0 && rapid.Bool().Draw(t, "fault "+r.name) {
			mix |= r.fault
		}
	}
	return mix
}

// drawFate draws the fate of request r admitted by a Step action: most
// often none, else one of the request faults of mix (a fault outside the
// mix, or Shuffle for a request other than a getChildren, is none). The
// list drawn from is the same whatever the mix, so that a draw means the
// same fate when rapid turns a fault off as it shrinks.
func drawFate(t *rapid.T, mix Fault, r *zkmem.Request) sim.Fate {
	fates := []Fault{0, 0, 0, LoseReply, DropRequest, Shuffle}
	f := fates[rapid.IntRange(0, len(fates)-1).Draw(t, "fate")]
	switch {
	case mix&f == 0:
		return sim.Fate{}
	case f == LoseReply:
		return sim.Fate{Fault: zkmem.LoseReply}
	case f == DropRequest:
		return sim.Fate{Fault: zkmem.DropRequest}
	case f == Shuffle:
		return sim.Fate{Shuffle: r.Op == zkmem.OpGetChildren}
	}
	return sim.Fate{}
}
