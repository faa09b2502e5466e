package difftest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// stats counts what the sequences exercised, to show in the test log that
// the generator reaches the interesting cases (successful and failing ops
// of every kind, fired watches).
type stats struct {
	mu        sync.Mutex
	sequences int
	steps     map[string]int // "kind outcome-error"
	events    map[string]int // watch event type
}

func newStats() *stats {
	return &stats{steps: make(map[string]int), events: make(map[string]int)}
}

func (s *stats) step(kind opKind, text string) {
	errPart := text[strings.LastIndex(text, "err=")+len("err="):]
	errPart, _, _ = strings.Cut(errPart, " zxid=")
	s.mu.Lock()
	s.steps[kind.String()+" "+errPart]++
	s.mu.Unlock()
}

func (s *stats) event(desc string) {
	kind, _, _ := strings.Cut(desc, " ")
	s.mu.Lock()
	s.events[kind]++
	s.mu.Unlock()
}

func (s *stats) sequence() {
	s.mu.Lock()
	s.sequences++
	s.mu.Unlock()
}

func (s *stats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	total := 0
	for _, n := range s.steps {
		total += n
	}
	fmt.Fprintf(&b, "%d sequences, %d steps; outcomes:\n", s.sequences, total)
	for _, k := range slices.Sorted(maps.Keys(s.steps)) {
		fmt.Fprintf(&b, "  %6d  %s\n", s.steps[k], k)
	}
	b.WriteString("watch events compared:\n")
	for _, k := range slices.Sorted(maps.Keys(s.events)) {
		fmt.Fprintf(&b, "  %6d  %s\n", s.events[k], k)
	}
	return b.String()
}
