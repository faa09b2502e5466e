package pump

import (
	"slices"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/zksim/zksim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ev(path string) zksim.Event { return zksim.Event{Type: zksim.EventNodeCreated, Path: path} }

// drain reads the channel until it is closed and returns the paths read.
func drain(c <-chan zksim.Event) []string {
	var paths []string
	for e := range c {
		paths = append(paths, e.Path)
	}
	return paths
}

// TestFinishDeliversEverything: pushes never wait for the reader, and
// Finish closes the channel after everything queued, its last event too.
func TestFinishDeliversEverything(t *testing.T) {
	for _, buffer := range []int{0, 1} {
		p := New(buffer, nil, nil)
		for _, path := range []string{"/a", "/b", "/c"} {
			if !p.Push(ev(path)) {
				t.Fatalf("buffer %d: Push reported the subscriber gone", buffer)
			}
		}
		last := ev("/last")
		p.Finish(&last)
		p.Push(ev("/ignored"))
		if got, want := drain(p.Out()), []string{"/a", "/b", "/c", "/last"}; !slices.Equal(got, want) {
			t.Errorf("buffer %d: got %v, want %v", buffer, got, want)
		}
	}
}

// TestStop: once stop is closed, Push reports the subscriber gone and the
// channel closes without what was queued.
func TestStop(t *testing.T) {
	stop := make(chan struct{})
	p := New(0, stop, nil)
	p.Push(ev("/a"))
	close(stop)
	if p.Push(ev("/b")) {
		t.Error("Push after stop reported the subscriber still there")
	}
	for range p.Out() {
		// "/a" may or may not have been handed over before the stop.
	}
}

// TestCloseWith: an abandoned pump hands a reader who has kept up the last
// event through the free buffer slot, and drops what is still queued for
// one who has not.
func TestCloseWith(t *testing.T) {
	last := ev("/last")

	abandon := make(chan struct{})
	p := New(1, nil, abandon)
	close(abandon)
	p.CloseWith(&last)
	if got, want := drain(p.Out()), []string{"/last"}; !slices.Equal(got, want) {
		t.Errorf("kept-up reader: got %v, want %v", got, want)
	}

	synctest.Test(t, func(t *testing.T) {
		abandon := make(chan struct{})
		p := New(1, nil, abandon)
		p.Push(ev("/a"))
		p.Push(ev("/b"))
		synctest.Wait() // "/a" fills the buffer slot
		close(abandon)
		p.CloseWith(&last)
		if got, want := drain(p.Out()), []string{"/a"}; !slices.Equal(got, want) {
			t.Errorf("lagging reader: got %v, want %v", got, want)
		}
	})
}
