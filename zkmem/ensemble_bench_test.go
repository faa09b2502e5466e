package zkmem_test

import (
	"context"
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// BenchmarkEnsemble runs the same operations on a standalone server and on
// 3- and 5-member ensembles (the client on a follower), side by side:
//
//	go test -run '^$' -bench Ensemble -benchmem ./zkmem/
func BenchmarkEnsemble(b *testing.B) {
	backends := []struct {
		name    string
		connect func(b *testing.B) *zkmem.Conn
	}{
		{"standalone", func(b *testing.B) *zkmem.Conn { _, c := benchConn(b); return c }},
		{"members=3", func(b *testing.B) *zkmem.Conn { return benchEnsembleConn(b, 3) }},
		{"members=5", func(b *testing.B) *zkmem.Conn { return benchEnsembleConn(b, 5) }},
	}
	ops := []struct {
		name string
		run  func(b *testing.B, c *zkmem.Conn)
	}{
		{"create", func(b *testing.B, c *zkmem.Conn) {
			mustCreate(b, c, "/b")
			paths := &pathSupply{b: b, dir: "/b"}
			for b.Loop() {
				mustCreate(b, c, paths.get())
			}
		}},
		{"set", func(b *testing.B, c *zkmem.Conn) {
			mustCreate(b, c, "/s")
			data := []byte("0123456789")
			for b.Loop() {
				if _, err := c.Set(context.Background(), "/s", data, -1); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"get", func(b *testing.B, c *zkmem.Conn) {
			mustCreate(b, c, "/g")
			for b.Loop() {
				if _, _, err := c.Get(context.Background(), "/g"); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"createDelete", func(b *testing.B, c *zkmem.Conn) {
			mustCreate(b, c, "/cd")
			for b.Loop() {
				mustCreate(b, c, "/cd/x")
				if err := c.Delete(context.Background(), "/cd/x", -1); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}
	for _, op := range ops {
		for _, be := range backends {
			b.Run(op.name+"/"+be.name, func(b *testing.B) {
				b.ReportAllocs()
				op.run(b, be.connect(b))
			})
		}
	}
}

// benchEnsembleConn connects to member 0, a follower, of an n-member
// ensemble.
func benchEnsembleConn(b *testing.B, n int) *zkmem.Conn {
	b.Helper()
	e := zkmem.NewEnsemble(n, zkmem.EnsembleOptions{})
	b.Cleanup(e.Close)
	c, err := e.Connect(zkmem.WithMembers(0))
	if err != nil {
		b.Fatal(err)
	}
	return c
}
