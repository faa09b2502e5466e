package sched

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/zksim/zksim/zkmem"
)

// Gate holds client steps until the test releases them. The zero value is
// a closed gate (steps wait). It is safe for concurrent use.
type Gate struct {
	mu      sync.Mutex
	waiting []*Step
	next    uint64
	open    bool
}

// Step is one request (or other client action) waiting at the gate.
type Step struct {
	Client int    // the client index
	Label  string // what the step does, e.g. "create /lock/_c_…-lock-"
	key    string // Label with GUIDs masked: random GUIDs must not decide the order
	seq    uint64
	answer chan zkmem.Fault
}

func (s *Step) String() string { return fmt.Sprintf("c%d %s", s.Client, s.Label) }

// guidPattern matches the random GUIDs recipes put in names.
var guidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Await blocks until the step is released and returns the fault it was
// released with. Once the gate is open it returns NoFault at once.
func (g *Gate) Await(client int, label string) zkmem.Fault {
	g.mu.Lock()
	if g.open {
		g.mu.Unlock()
		return zkmem.NoFault
	}
	s := &Step{Client: client, Label: label, key: guidPattern.ReplaceAllString(label, "<guid>"), seq: g.next, answer: make(chan zkmem.Fault, 1)}
	g.next++
	g.waiting = append(g.waiting, s)
	g.mu.Unlock()
	return <-s.answer
}

// Hook returns a zkmem fault hook that makes every request of client wait
// at the gate.
func (g *Gate) Hook(client int) func(zkmem.Request) zkmem.Fault {
	return func(r zkmem.Request) zkmem.Fault { return g.Await(client, r.String()) }
}

// Waiting returns the steps waiting, in a canonical order: by client, then
// by label (GUIDs masked), then by arrival.
func (g *Gate) Waiting() []*Step {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := slices.Clone(g.waiting)
	slices.SortFunc(out, func(a, b *Step) int {
		if c := cmp.Compare(a.Client, b.Client); c != 0 {
			return c
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// Release lets s go on with fault f. A step released twice is an error of
// the test and panics.
func (g *Gate) Release(s *Step, f zkmem.Fault) {
	g.mu.Lock()
	i := slices.Index(g.waiting, s)
	if i < 0 {
		g.mu.Unlock()
		panic("sched: step released twice: " + s.String())
	}
	g.waiting = slices.Delete(g.waiting, i, i+1)
	g.mu.Unlock()
	s.answer <- f
}

// Open releases every waiting step without a fault and lets every later
// step pass at once. It is how a test ends: nothing waits at the gate
// after it.
func (g *Gate) Open() {
	g.mu.Lock()
	g.open = true
	waiting := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	for _, s := range waiting {
		s.answer <- zkmem.NoFault
	}
}
