package zkmem_test

import (
	"context"
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// BenchmarkEnsemble runs the same operations on a standalone server and on
// ensembles, side by side, the client on member 0 (a follower):
//
//	go test -run '^$' -bench Ensemble -benchmem ./zkmem/
//
// members=N: every member keeps up. members=3,replaying: the two other
// members lag, and each applies one commit after each operation, as a
// simulator's steps make them (they replay the log on their own trees).
// cpu-ns/op is the process's CPU time per operation, steadier than ns/op
// on a busy machine.
func BenchmarkEnsemble(b *testing.B) {
	noStep := func() {}
	backends := []struct {
		name    string
		connect func(b *testing.B) (*zkmem.Conn, func())
	}{
		{"standalone", func(b *testing.B) (*zkmem.Conn, func()) { _, c := benchConn(b); return c, noStep }},
		{"members=3", func(b *testing.B) (*zkmem.Conn, func()) { c, _ := benchEnsembleConn(b, 3); return c, noStep }},
		{"members=5", func(b *testing.B) (*zkmem.Conn, func()) { c, _ := benchEnsembleConn(b, 5); return c, noStep }},
		{"members=3,replaying", func(b *testing.B) (*zkmem.Conn, func()) {
			c, e := benchEnsembleConn(b, 3)
			e.Lag(1)
			e.Lag(2)
			return c, func() {
				e.ApplyNext(1)
				e.ApplyNext(2)
			}
		}},
	}
	ops := []struct {
		name string
		run  func(b *testing.B, c *zkmem.Conn, step func())
	}{
		{"create", func(b *testing.B, c *zkmem.Conn, step func()) {
			mustCreate(b, c, "/b")
			step()
			paths := &pathSupply{b: b, dir: "/b"}
			for b.Loop() {
				mustCreate(b, c, paths.get())
				step()
			}
		}},
		{"set", func(b *testing.B, c *zkmem.Conn, step func()) {
			mustCreate(b, c, "/s")
			step()
			data := []byte("0123456789")
			for b.Loop() {
				if _, err := c.Set(context.Background(), "/s", data, -1); err != nil {
					b.Fatal(err)
				}
				step()
			}
		}},
		{"get", func(b *testing.B, c *zkmem.Conn, step func()) {
			mustCreate(b, c, "/g")
			step()
			for b.Loop() {
				if _, _, err := c.Get(context.Background(), "/g"); err != nil {
					b.Fatal(err)
				}
				step()
			}
		}},
		{"createDelete", func(b *testing.B, c *zkmem.Conn, step func()) {
			mustCreate(b, c, "/cd")
			step()
			for b.Loop() {
				mustCreate(b, c, "/cd/x")
				step()
				if err := c.Delete(context.Background(), "/cd/x", -1); err != nil {
					b.Fatal(err)
				}
				step()
			}
		}},
	}
	for _, op := range ops {
		for _, be := range backends {
			b.Run(op.name+"/"+be.name, func(b *testing.B) {
				b.ReportAllocs()
				c, step := be.connect(b)
				cpu0 := cpuTime()
				op.run(b, c, step)
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// benchEnsembleConn connects to member 0, a follower, of an n-member
// ensemble.
func benchEnsembleConn(b *testing.B, n int) (*zkmem.Conn, *zkmem.Ensemble) {
	b.Helper()
	e := zkmem.NewEnsemble(n, zkmem.EnsembleOptions{})
	b.Cleanup(e.Close)
	c, err := e.Connect(zkmem.WithMembers(0))
	if err != nil {
		b.Fatal(err)
	}
	return c, e
}
