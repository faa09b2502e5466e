package sim

import (
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A pipe's reader: woken by a delivery, by its read deadline (at exactly
// that virtual instant, not before, and not once the deadline was cleared
// or moved), and by the client's close.
func TestPipeReadWakesAndDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &World{}
		p := newPipe(&session{w: w}, 1)
		type res struct {
			n   int
			err error
			at  time.Duration
		}
		start := time.Now()
		read := func() <-chan res {
			ch := make(chan res, 1)
			go func() {
				n, err := p.Read(make([]byte, 8))
				ch <- res{n, err, time.Since(start)}
			}()
			return ch
		}
		deliver := func(b []byte) {
			w.mu.Lock()
			p.rbuf = append(p.rbuf, b...)
			w.mu.Unlock()
			p.signal()
		}

		// The deadline passes at 1s.
		p.SetReadDeadline(start.Add(time.Second))
		if r := <-read(); !errors.Is(r.err, os.ErrDeadlineExceeded) || r.at != time.Second {
			t.Fatalf("read with a 1s deadline: %v at %v", r.err, r.at)
		}
		// Passed: a read fails at once, unless there is data.
		if r := <-read(); !errors.Is(r.err, os.ErrDeadlineExceeded) || r.at != time.Second {
			t.Fatalf("read after the deadline: %v at %v", r.err, r.at)
		}
		deliver([]byte("ab"))
		if r := <-read(); r.err != nil || r.n != 2 {
			t.Fatalf("read of data after the deadline: %d, %v", r.n, r.err)
		}

		// Moved later while a read waits: it waits until the new one.
		p.SetReadDeadline(time.Now().Add(time.Second)) // 2s
		ch := read()
		time.Sleep(500 * time.Millisecond)
		p.SetReadDeadline(time.Now().Add(2 * time.Second)) // 3.5s
		if r := <-ch; !errors.Is(r.err, os.ErrDeadlineExceeded) || r.at != 3500*time.Millisecond {
			t.Fatalf("read whose deadline moved to 3.5s: %v at %v", r.err, r.at)
		}

		// Cleared: a read waits past the old deadline, for a delivery.
		p.SetReadDeadline(time.Now().Add(time.Second)) // 4.5s
		p.SetReadDeadline(time.Time{})
		ch = read()
		time.Sleep(5 * time.Second)
		deliver([]byte("cd"))
		if r := <-ch; r.err != nil || r.n != 2 || r.at != 8500*time.Millisecond {
			t.Fatalf("read with the deadline cleared: %d, %v at %v", r.n, r.err, r.at)
		}

		// A deadline in the past wakes a waiting read at once.
		ch = read()
		synctest.Wait()
		p.SetReadDeadline(time.Now().Add(-time.Second))
		if r := <-ch; !errors.Is(r.err, os.ErrDeadlineExceeded) || r.at != 8500*time.Millisecond {
			t.Fatalf("read when the deadline is set in the past: %v at %v", r.err, r.at)
		}

		// The client's close wakes a waiting read.
		p.SetReadDeadline(time.Time{})
		ch = read()
		synctest.Wait()
		w.mu.Lock()
		w.closed = true // Close sends no hangup then
		w.mu.Unlock()
		p.Close()
		if r := <-ch; !errors.Is(r.err, net.ErrClosed) {
			t.Fatalf("read when the client closes: %v", r.err)
		}
	})
}

// A read deadline moved later, or cleared, leaves the timer armed for the
// earlier time (go-zookeeper sets and clears one around every frame: the
// timer is not stopped and reset each time); when it fires early it arms
// itself for the deadline then set. A deadline moved earlier re-arms it.
func TestDeadlineKeepsItsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu       sync.Mutex
			passedAt []time.Duration // the timer's goroutine appends
		)
		start := time.Now()
		d := &deadline{}
		d.wake = func() {
			mu.Lock()
			passedAt = append(passedAt, time.Since(start))
			mu.Unlock()
		}
		armed := func() time.Duration {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.armed.Sub(start)
		}
		passed := func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(passedAt)
		}
		d.set(start.Add(time.Second))
		d.set(time.Time{})
		d.set(start.Add(3 * time.Second))
		if got := armed(); got != time.Second {
			t.Fatalf("deadline moved from 1s to 3s: timer armed for %v, want it left at 1s", got)
		}
		time.Sleep(2 * time.Second)
		if p := passed(); len(p) != 0 || d.passed() {
			t.Fatalf("at 2s: passed at %v, want not yet (the deadline is 3s)", p)
		}
		if got := armed(); got != 3*time.Second {
			t.Fatalf("after the early firing: timer armed for %v, want 3s", got)
		}
		d.set(start.Add(2500 * time.Millisecond)) // earlier
		time.Sleep(2 * time.Second)
		if p := passed(); !d.passed() || len(p) != 1 || p[0] != 2500*time.Millisecond {
			t.Fatalf("deadline moved to 2.5s: passed at %v, want once at 2.5s", p)
		}
	})
}
