package sim_test

import (
	"context"
	"fmt"
	"testing"

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
				benchSchedule(b, sim.Config{}, func(w *sim.World) error {
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
