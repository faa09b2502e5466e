package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
// every step from outside the bubble, cpu-ns/event is the CPU time of the
// process per step (see benchSteps). BenchmarkWakeFloor is the Go
// runtime's share of the same steps.
//
//	go test -run '^$' -bench 'Schedule$' -benchtime 200000x ./sim/
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			benchSchedule(b, sim.Config{}, readWriters(n))
		})
	}
}

// BenchmarkSchedulePCT is BenchmarkSchedule with PCT priorities (depth 3)
// choosing the events: the enabled session of highest priority is found
// in a heap, not by looking at every enabled event.
//
//	go test -run '^$' -bench 'SchedulePCT' -benchtime 200000x ./sim/
func BenchmarkSchedulePCT(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			benchSchedule(b, sim.Config{PCT: sim.PCT{Depth: 3, Steps: 100000}}, readWriters(n))
		})
	}
}

// readWriters connects n clients and starts readWriteLoop on each.
func readWriters(n int) func(w *sim.World) error {
	return func(w *sim.World) error {
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
	}
}

// benchSchedule times the steps of a World made from cfg (seed 1, no
// trace) and filled by setup (see benchSteps).
func benchSchedule(b *testing.B, cfg sim.Config, setup func(w *sim.World) error) {
	cfg.Seed, cfg.NoTrace = 1, true
	benchSteps(b, func(t *testing.T) (step func(), end func()) {
		w, err := sim.New(cfg)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		if err := setup(w); err != nil {
			t.Error(err)
			return nil, w.Close
		}
		return func() {
			if err := w.Step(); err != nil {
				t.Error(err)
			}
		}, w.Close
	})
}

// benchSteps times the steps setup returns, one step an op: setup and the
// steps run in a synctest bubble (a bubble cannot time itself: its clock
// is virtual), the steps in batches the benchmark loop hands over; end, if
// not nil, runs in the bubble at the end, and so does t's cleanup. A nil
// step is a failed setup. It reports events/s and ns/event of real time,
// and cpu-ns/event: the CPU time the process spent per step (every thread:
// the scheduler, the clients, the garbage collector), which other
// processes on a shared machine disturb less than the real time.
func benchSteps(b *testing.B, setup func(t *testing.T) (step func(), end func())) {
	benchStepsPer(b, "event", setup)
}

// benchStepsPer is benchSteps for steps that are not simulator events:
// its metrics are per unit (events/s becomes unit+"s/s", ns/event
// "ns/"+unit, cpu-ns/event "cpu-ns/"+unit).
func benchStepsPer(b *testing.B, unit string, setup func(t *testing.T) (step func(), end func())) {
	batches := make(chan int)     // steps to take; closed at the end
	done := make(chan struct{})   // set up, or a batch taken
	result := make(chan error, 1) // the bubble's end
	go func() {
		result <- inBubble(b.Name(), func(t *testing.T) {
			step, end := setup(t)
			if end != nil {
				defer end()
			}
			if step == nil {
				return
			}
			done <- struct{}{}
			for k := range batches {
				for range k {
					step()
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
	b.ReportMetric(float64(b.N)/el.Seconds(), unit+"s/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/"+unit)
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/"+unit)
	}
}

// BenchmarkWakeFloor measures what the steps of BenchmarkSchedule cost the
// Go runtime in the simulator's design, with n clients: each client is a
// goroutine that sends a request (a new one, with a new channel) and parks
// on its channel; a step waits for every goroutine of the bubble to block
// (synctest.Wait), takes in the requests sent, and draws one event among
// the enabled ones, as the scheduler does: "apply" a request (write its
// result) or "deliver" a reply (wake its client). Nothing else: no server,
// no FIFO, no trace. Its ns/event beside BenchmarkSchedule's, at the same
// n, is the part of a step no change to the scheduler can remove: waking
// one goroutine among n, whose stack and records are no longer in the
// processor's caches once n is large.
//
//	go test -run '^$' -bench 'Schedule$|WakeFloor' -benchtime 200000x ./sim/
func BenchmarkWakeFloor(b *testing.B) { wakeFloor(b, false) }

// BenchmarkWakeFloorReused is BenchmarkWakeFloor with nothing allocated
// per request, as the simulator's clients do since they reuse their
// request records (session.spare): each goroutine's request, and its
// channel of one slot, serve all its requests; a delivery sends on the
// channel instead of closing it. What is left is the Go runtime's part
// alone: synctest.Wait and the wake-up of one goroutine among n.
//
//	go test -run '^$' -bench 'Schedule$|WakeFloor' -benchtime 200000x ./sim/
func BenchmarkWakeFloorReused(b *testing.B) { wakeFloor(b, true) }

func wakeFloor(b *testing.B, reuse bool) {
	type request struct {
		done chan struct{}
		res  [20]uintptr // what the reply carries: a sim.Conn call's result is as big
	}
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			benchSteps(b, func(t *testing.T) (step func(), end func()) {
				var (
					mu      sync.Mutex
					arrived []*request
					stop    bool
				)
				for range n {
					go func() {
						r := &request{done: make(chan struct{}, 1)}
						for {
							if !reuse {
								r = &request{done: make(chan struct{})}
							}
							mu.Lock()
							arrived = append(arrived, r)
							mu.Unlock()
							<-r.done
							mu.Lock()
							s := stop
							mu.Unlock()
							if s {
								return
							}
						}
					}()
				}
				var pending, replied []*request
				take := func() {
					synctest.Wait()
					mu.Lock()
					pending = append(pending, arrived...)
					clear(arrived)
					arrived = arrived[:0]
					mu.Unlock()
				}
				remove := func(l []*request, k int) []*request {
					l[k] = l[len(l)-1]
					l[len(l)-1] = nil
					return l[:len(l)-1]
				}
				wake := func(r *request) {
					if reuse {
						r.done <- struct{}{}
					} else {
						close(r.done)
					}
				}
				rng := rand.New(rand.NewPCG(1, 0))
				step = func() {
					take()
					k := rng.IntN(len(pending) + len(replied))
					if k < len(pending) { // apply
						r := pending[k]
						pending = remove(pending, k)
						r.res[0] = 1
						replied = append(replied, r)
						return
					}
					k -= len(pending) // deliver
					r := replied[k]
					replied = remove(replied, k)
					wake(r)
				}
				end = func() {
					take()
					mu.Lock()
					stop = true
					mu.Unlock()
					for _, r := range append(pending, replied...) {
						wake(r)
					}
				}
				return step, end
			})
		})
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
