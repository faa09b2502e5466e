package sim_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// BenchmarkSchedule measures the scheduler: steps per second of real time
// with n clients that each read and write znodes in a loop (every request
// is two steps: apply, then deliver the reply). The events/s and ns/event
// metrics leave out setting up the World; ns/op (one op = one step)
// includes it.
//
//	go test -run '^$' -bench Schedule -benchtime 200000x ./sim/
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			steps := max(b.N, 1)
			var start, end time.Time
			mark := make(chan *time.Time)
			marked := make(chan struct{})
			go func() { // outside the bubble: real time
				for p := range mark {
					*p = time.Now()
					marked <- struct{}{}
				}
			}()
			defer close(mark)
			runInBubble(b, func(t *testing.T) {
				w, err := sim.New(sim.Config{Seed: 1, Clients: n, NoTrace: true})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				for i := range n {
					c := w.Conn(i)
					w.Go(func(ctx context.Context) { readWriteLoop(ctx, c, i) })
				}
				mark <- &start
				<-marked
				for range steps {
					if err := w.Step(); err != nil {
						t.Fatal(err)
					}
				}
				mark <- &end
				<-marked
			})
			el := end.Sub(start)
			b.ReportMetric(float64(steps)/el.Seconds(), "events/s")
			b.ReportMetric(float64(el.Nanoseconds())/float64(steps), "ns/event")
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

// runInBubble runs f in a synctest bubble from a benchmark: synctest.Test
// needs a *testing.T, so f runs as a test of its own.
func runInBubble(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: b.Name(), F: func(t *testing.T) { synctest.Test(t, f) }}})
	if !ok {
		b.Fatal("the bubble failed")
	}
}
