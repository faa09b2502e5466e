package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/zkmem"
)

// BenchmarkCheck measures Check alone on histories of the random workload
// run by 4 or 8 concurrent clients on zkmem (recorded once, outside the
// loop); ns/histop is the time per operation of the history.
//
//	go test -run '^$' -bench BenchmarkCheck ./history/
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct{ clients, ops, paths int }{{4, 15, 3}, {4, 50, 3}, {4, 250, 3}, {8, 125, 3}, {8, 125, 1}, {8, 1250, 3}} {
		h := record(b, c.clients, c.ops, c.paths)
		b.Run(fmt.Sprintf("clients=%d/ops=%d/paths=%d", c.clients, len(h), c.paths), func(b *testing.B) {
			for b.Loop() {
				if err := history.Check(h); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h)), "ns/histop")
		})
	}
}

// record runs the workload on a fresh zkmem server and returns its history.
func record(b *testing.B, clients, ops, paths int) []history.Op {
	b.Helper()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	var conns []zksim.Conn
	for range clients {
		c, err := srv.Connect()
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	rec := history.NewRecorder(nil)
	wl := history.Workload{Root: "/bench", Paths: paths, Ops: ops, Seed: 1}
	if err := wl.Run(context.Background(), rec, conns); err != nil {
		b.Fatal(err)
	}
	return rec.History()
}
