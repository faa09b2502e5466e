package sim

import (
	"math/rand/v2"
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
