package sim

// enabledSet is a set of session indices that can count its members and
// find the k-th smallest in O(log n): a Fenwick tree over 0/1 flags. It is
// how a step picks among the sessions with something to do without looking
// at every session.
type enabledSet struct {
	tree  []int32 // 1-based Fenwick tree of the flags
	flags []bool
	n     int // members
	// byPrio, with PCT on, keeps the members by priority (pct.go).
	byPrio *prioHeap
}

// grow makes room for indices below size.
func (s *enabledSet) grow(size int) {
	if size <= len(s.flags) {
		return
	}
	c := max(size, 2*len(s.flags), 16)
	old := s.flags
	s.flags = make([]bool, c)
	s.tree = make([]int32, c+1)
	s.n = 0
	byPrio := s.byPrio // the members stay the same
	s.byPrio = nil
	for i, f := range old {
		if f {
			s.set(i, true)
		}
	}
	s.byPrio = byPrio
}

// set puts i in the set (on) or takes it out.
func (s *enabledSet) set(i int, on bool) {
	if s.flags[i] == on {
		return
	}
	s.flags[i] = on
	d := int32(1)
	if !on {
		d = -1
	}
	s.n += int(d)
	for j := i + 1; j < len(s.tree); j += j & -j {
		s.tree[j] += d
	}
	if s.byPrio != nil {
		if on {
			s.byPrio.add(i)
		} else {
			s.byPrio.remove(i)
		}
	}
}

// has reports whether i is a member.
func (s *enabledSet) has(i int) bool { return i < len(s.flags) && s.flags[i] }

// rank returns the number of members smaller than i: i's position among
// them, counting from 0, if i is a member.
func (s *enabledSet) rank(i int) int {
	n := int32(0)
	for j := i; j > 0; j -= j & -j {
		n += s.tree[j]
	}
	return int(n)
}

// len returns the number of members.
func (s *enabledSet) len() int { return s.n }

// nth returns the k-th smallest member, counting from 0; k < len().
func (s *enabledSet) nth(k int) int {
	pos := 0
	rem := int32(k) + 1
	step := 1
	for step*2 < len(s.tree) {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if next := pos + step; next < len(s.tree) && s.tree[next] < rem {
			pos = next
			rem -= s.tree[next]
		}
	}
	// tree[1..pos] counts k members: the next one, 1-based index pos+1,
	// is member k; its 0-based index is pos.
	return pos
}
