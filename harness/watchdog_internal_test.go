package harness

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// setStall makes stallAfter d until t ends. The test must not be
// parallel.
func setStall(t *testing.T, d time.Duration) {
	t.Helper()
	old := stallAfter
	stallAfter = d
	t.Cleanup(func() { stallAfter = old })
}

// A watchdog whose check made its World takes it for hung once no step
// came for stallAfter, not while steps come, and not once stopped.
func TestWatchdogCatchesAStall(t *testing.T) {
	setStall(t, 50*time.Millisecond)
	hung := make(chan string, 2)
	w := startWatchdog(func(msg string) { hung <- msg })
	defer w.stop()
	w.armed.Store(true)
	for range 20 { // 200 ms of steps
		w.beat()
		time.Sleep(10 * time.Millisecond)
		select {
		case msg := <-hung:
			t.Fatalf("taken for hung while stepping: %s", msg)
		default:
		}
	}
	select {
	case msg := <-hung:
		if !strings.Contains(msg, "no simulator step for 50ms") {
			t.Errorf("hang reported as %q", msg)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a stall of 2s was not caught")
	}
}

// Without a World (a property of one's own under InBubbles, or a check
// still drawing its parameters), only hangAfter applies; a stopped
// watchdog says nothing.
func TestWatchdogStallNeedsAWorld(t *testing.T) {
	setStall(t, 20*time.Millisecond)
	hung := make(chan string, 2)
	w := startWatchdog(func(msg string) { hung <- msg })
	time.Sleep(150 * time.Millisecond)
	w.armed.Store(true)
	w.stop()
	time.Sleep(100 * time.Millisecond)
	select {
	case msg := <-hung:
		t.Errorf("taken for hung: %s", msg)
	default:
	}
}

// A process deadlocked on a sync.Mutex stops the simulator's steps: the
// watchdog reports it after stallAfter, not after hangAfter (a minute).
// The test holds the mutex, and lets it go once the hang is reported, so
// that the check ends.
func TestWatchdogCatchesADeadlockedProcess(t *testing.T) {
	setStall(t, 300*time.Millisecond)
	var gate sync.Mutex
	gate.Lock()
	var once sync.Once
	release := func() { once.Do(gate.Unlock) }
	defer release()
	hung := make(chan string, 100)
	old := onHang
	onHang = func(msg string) {
		hung <- msg
		release()
	}
	defer func() { onHang = old }()
	m := Machine[struct{}]{
		Name:      "deadlock",
		Processes: 1,
		New:       func(*Process[struct{}]) struct{} { return struct{}{} },
		Ops: map[string]func(*rapid.T, *Process[struct{}]){
			"Block": func(t *rapid.T, p *Process[struct{}]) {
				p.Go("block", func(context.Context) error {
					gate.Lock() // not durably blocking: synctest waits on
					defer gate.Unlock()
					return nil
				})
			},
		},
	}
	Explore(t, m, ExploreOptions{Checks: 20})
	select {
	case msg := <-hung:
		if !strings.Contains(msg, "no simulator step") {
			t.Errorf("hang reported as %q", msg)
		}
	default:
		t.Error("the deadlocked process was not reported")
	}
}
