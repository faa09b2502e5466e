package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/sim"
)

// BenchmarkScheduleZK compares the scheduler's speed with go-zookeeper
// clients (*zk.Conn over in-memory pipes into zkwire's server logic, every
// frame a step) and with native sim.Conn clients, in one run: scheduled
// events per second of real time with n clients that each read and write
// their own znode in a loop. One op is one step (apply a request, deliver
// a reply; for go-zookeeper clients also their handshakes and pings). The
// go-zookeeper clients are given 64 KiB buffers (zk.WithMaxConnBufferSize,
// zk.WithMaxBufferSize) instead of go-zookeeper's 1.5 MiB each way, so
// that 1,000 of them fit in memory.
//
//	go test -run '^$' -bench ScheduleZK -benchtime 100000x ./sim/
func BenchmarkScheduleZK(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		for _, kind := range []string{"native", "gozk"} {
			b.Run(fmt.Sprintf("clients=%d/%s", n, kind), func(b *testing.B) {
				benchSchedule(b, func(w *sim.World) error {
					if kind == "native" {
						for i := range n {
							c, err := w.Connect()
							if err != nil {
								return err
							}
							w.Go(func(ctx context.Context) { readWriteLoop(ctx, c, i) })
						}
						return nil
					}
					for i := range n {
						zc, events, err := w.ConnectZK(
							func(c *zk.Conn) { zk.WithMaxConnBufferSize(64 << 10)(c) },
							func(c *zk.Conn) { zk.WithMaxBufferSize(64 << 10)(c) })
						if err != nil {
							return err
						}
						go func() {
							for range events {
							}
						}()
						w.Go(func(ctx context.Context) { zkReadWriteLoop(ctx, zc, i) })
					}
					return nil
				})
			})
		}
	}
}

// benchSchedule times the steps of a World that setup fills, as
// BenchmarkSchedule does: the steps are taken in the World's bubble, in
// batches the benchmark loop hands over.
func benchSchedule(b *testing.B, setup func(w *sim.World) error) {
	batches := make(chan int)
	done := make(chan struct{})
	result := make(chan error, 1)
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
	wait := func() {
		select {
		case <-done:
		case err := <-result:
			b.Fatalf("the bubble ended: %v", err)
		}
	}
	wait()
	const batch = 100
	pending := 0
	start := time.Now()
	for b.Loop() {
		if pending++; pending == batch {
			batches <- pending
			wait()
			pending = 0
		}
	}
	if pending > 0 {
		batches <- pending
		wait()
	}
	el := time.Since(start)
	close(batches)
	if err := <-result; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/event")
}

// zkReadWriteLoop is readWriteLoop on a go-zookeeper client.
func zkReadWriteLoop(ctx context.Context, zc *zk.Conn, i int) {
	p := fmt.Sprintf("/n%d", i)
	if _, err := zc.Create(p, []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		return
	}
	for k := 0; ctx.Err() == nil; k++ {
		var err error
		if k%4 == 3 {
			_, err = zc.Set(p, []byte{byte(k)}, -1)
		} else {
			_, _, err = zc.Get(p)
		}
		if err != nil {
			return
		}
	}
}
