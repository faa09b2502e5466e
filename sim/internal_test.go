package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEnabledSetNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s enabledSet
	naive := map[int]bool{}
	size := 0
	for range 5000 {
		if rng.IntN(50) == 0 {
			size += rng.IntN(40)
			s.grow(size)
		}
		if size == 0 {
			continue
		}
		i := rng.IntN(size)
		on := rng.IntN(2) == 0
		s.set(i, on)
		if on {
			naive[i] = true
		} else {
			delete(naive, i)
		}
		var members []int
		for j := range size {
			if naive[j] {
				members = append(members, j)
			}
		}
		if s.len() != len(members) {
			t.Fatalf("len %d, want %d", s.len(), len(members))
		}
		for k, m := range members {
			if got := s.nth(k); got != m {
				t.Fatalf("nth(%d) = %d, want %d (members %v)", k, got, m, members)
			}
		}
	}
}

func TestTraceNamesGUIDs(t *testing.T) {
	var tr tracer
	tr.init(true, nil)
	a, b := "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	tr.add("create /l/_c_" + a + "-lock- -> /l/_c_" + a + "-lock-0000000001")
	tr.add("x " + b + " y " + a)
	tr.add("not a guid: 0f8fad5b-d9cb-469f-a165-70867728950")
	want := []string{
		"create /l/_c_{g1}-lock- -> /l/_c_{g1}-lock-0000000001",
		"x {g2} y {g1}",
		"not a guid: 0f8fad5b-d9cb-469f-a165-70867728950",
	}
	for i, w := range want {
		if tr.lines[i] != w {
			t.Errorf("line %d: %q, want %q", i, tr.lines[i], w)
		}
	}
}

// pctPickScan is pctPick as it was, looking at every enabled event: the
// reference the heaps must agree with.
func (w *World) pctPickScan(applies, n, step int) int {
	p := &w.pct
	session := func(k int) *session {
		if k < applies {
			return w.sessions[w.applyOK.nth(k)]
		}
		return w.sessions[w.deliver.nth(k-applies)]
	}
	best, bestPrio := -1, int64(0)
	var ties []int
	for k := range n {
		s := session(k)
		switch {
		case best < 0 || s.prio > bestPrio:
			best, bestPrio = s.idx, s.prio
			ties = append(ties[:0], k)
		case s.idx == best:
			ties = append(ties, k)
		}
	}
	k := ties[0]
	if len(ties) > 1 {
		k = ties[p.rng.IntN(len(ties))]
	}
	for len(p.changes) > 0 && p.changes[0] <= step {
		p.changes = p.changes[1:]
		p.low--
		session(k).prio = int64(p.low)
	}
	return k
}

// The PCT pick through the priority heaps takes the same events, and
// draws the same numbers, as the scan over every enabled event did: ties
// of priority, sessions joining and leaving both sets, steps where no
// apply may start, and priority change points.
func TestPCTPickMatchesScan(t *testing.T) {
	picks := func(seed uint64, scan bool) []int {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := &World{}
		w.pct.init(PCT{Depth: 1 + rng.IntN(6), Steps: 300}, seed)
		w.applyOK.byPrio = &prioHeap{sessions: &w.sessions}
		w.deliver.byPrio = &prioHeap{sessions: &w.sessions}
		var out []int
		for step := 1; step <= 300; step++ {
			if len(w.sessions) == 0 || rng.IntN(20) == 0 {
				s := &session{idx: len(w.sessions), prio: rng.Int64N(4)}
				w.sessions = append(w.sessions, s)
				w.applyOK.grow(len(w.sessions))
				w.deliver.grow(len(w.sessions))
			}
			for range 1 + rng.IntN(3) {
				i := rng.IntN(len(w.sessions))
				if rng.IntN(2) == 0 {
					w.applyOK.set(i, rng.IntN(3) > 0)
				} else {
					w.deliver.set(i, rng.IntN(3) > 0)
				}
			}
			applies := w.applyOK.len()
			if rng.IntN(4) == 0 {
				applies = 0 // the server is busy
			}
			n := applies + w.deliver.len()
			if n == 0 {
				continue
			}
			if scan {
				out = append(out, w.pctPickScan(applies, n, step))
			} else {
				out = append(out, w.pctPick(applies, step))
			}
		}
		return out
	}
	for seed := range uint64(300) {
		want, got := picks(seed, true), picks(seed, false)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: heap picks %v\nscan picks %v", seed, got, want)
		}
	}
}
