package sim_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// BenchmarkSchedule measures the scheduler: steps per second of real time
// with n clients that each read and write znodes in a loop (every request
// is two steps: apply, then deliver the reply). One op is one step; the
// World is set up before the timer starts. The steps are taken in the
// World's bubble, in batches the benchmark loop hands over (a bubble
// cannot time itself: its clock is virtual); events/s and ns/event time
// every step from outside the bubble.
//
//	go test -run '^$' -bench Schedule -benchtime 200000x ./sim/
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			benchSchedule(b, func(w *sim.World) error {
				for range n {
					if _, err := w.Connect(); err != nil {
						return err
					}
				}
				for i := range n {
					c := w.Conn(i)
					w.Go(func(ctx context.Context) { readWriteLoop(ctx, c, i) })
				}
				return nil
			})
		})
	}
}

// benchSchedule times the steps of a World that setup fills: the steps are
// taken in the World's bubble (a bubble cannot time itself: its clock is
// virtual), in batches the benchmark loop hands over. It reports events/s
// and ns/event of real time, and cpu-ns/event: the CPU time the process
// spent per step (every thread: the scheduler, the clients, the garbage
// collector), which other processes on a shared machine disturb less than
// the real time.
func benchSchedule(b *testing.B, setup func(w *sim.World) error) {
	batches := make(chan int)     // steps to take; closed at the end
	done := make(chan struct{})   // set up, or a batch taken
	result := make(chan error, 1) // the bubble's end
	go func() {
		result <- inBubble(b.Name(), func(t *testing.T) {
			w, err := sim.New(sim.Config{Seed: 1, NoTrace: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			if err := setup(w); err != nil {
				t.Error(err)
				return
			}
			done <- struct{}{}
			for k := range batches {
				for range k {
					if err := w.Step(); err != nil {
						t.Error(err)
					}
				}
				done <- struct{}{}
			}
		})
	}()
	wait := func() { // for done, or the bubble's failure
		select {
		case <-done:
		case err := <-result:
			b.Fatalf("the bubble ended: %v", err)
		}
	}
	wait() // set up
	const batch = 100
	pending := 0
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		if pending++; pending == batch {
			batches <- pending
			wait()
			pending = 0
		}
	}
	if pending > 0 { // the last few, outside the timer
		batches <- pending
		wait()
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	close(batches)
	if err := <-result; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/event")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	}
}

// readWriteLoop creates the client's node, then reads and writes it until
// ctx ends.
func readWriteLoop(ctx context.Context, c *sim.Conn, i int) {
	p := fmt.Sprintf("/n%d", i)
	if _, err := c.Create(ctx, p, []byte("x"), zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		return
	}
	for k := 0; ctx.Err() == nil; k++ {
		var err error
		if k%4 == 3 {
			_, err = c.Set(ctx, p, []byte{byte(k)}, -1)
		} else {
			_, _, err = c.Get(ctx, p)
		}
		if err != nil {
			return
		}
	}
}

// inBubble runs f in a synctest bubble, as a test of its own (synctest.Test
// needs a *testing.T), and reports whether it failed. f runs once:
// testing.RunTests repeats its tests -test.count times, and a second run
// would wait for batches nobody sends.
func inBubble(name string, f func(t *testing.T)) error {
	var once sync.Once
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: name, F: func(t *testing.T) { once.Do(func() { synctest.Test(t, f) }) }}})
	if !ok {
		return errors.New("the bubble failed")
	}
	return nil
}
