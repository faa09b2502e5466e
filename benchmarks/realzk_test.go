package benchmarks_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
)

// BenchmarkZkmemVsReal runs the single-operation benchmarks of zkmem
// (zkmem/bench_test.go: the same operations, data and tree shapes) on zkmem
// and on a real ZooKeeper 3.8 side by side, in one run, so that the ratio
// of the two is measured under the same conditions:
//
//	go test ./benchmarks/ -run '^$' -bench ZkmemVsReal -benchmem
//
// The real server is a standalone ZooKeeper from the Debian package started
// by zkserver on loopback, with its default durability (every write is
// fsynced to its transaction log), reached through gozk (go-zookeeper). Its
// figures are round trips over TCP to another process; zkmem's are
// function calls. benchmarks/zkmem-vs-real.md holds a table of results.
func BenchmarkZkmemVsReal(b *testing.B) {
	server := zkserver.Start(b)
	backends := []struct {
		name    string
		connect func(b *testing.B) (watcher, writer zksim.Conn, root string)
	}{
		{"zkmem", func(b *testing.B) (zksim.Conn, zksim.Conn, string) {
			srv := zkmem.NewServer(zkmem.Options{})
			b.Cleanup(srv.Close)
			return memConn(b, srv), memConn(b, srv), "/bench"
		}},
		{"real", func(b *testing.B) (zksim.Conn, zksim.Conn, string) {
			return server.Connect(b), server.Connect(b), server.Root(b)
		}},
	}
	for _, op := range []struct {
		name string
		run  func(b *testing.B, watcher, writer zksim.Conn, root string)
	}{
		{"Create", benchCreate},
		{"Get", benchGet},
		{"Set", benchSet},
		{"Delete", benchDelete},
		{"Children", benchChildren},
		{"WatchRoundTrip", benchWatchRoundTrip},
	} {
		b.Run(op.name, func(b *testing.B) {
			for _, backend := range backends {
				b.Run(backend.name, func(b *testing.B) {
					watcher, writer, root := backend.connect(b)
					mustCreate(b, watcher, root)
					op.run(b, watcher, writer, root)
				})
			}
		})
	}
}

func memConn(b *testing.B, srv *zkmem.Server) zksim.Conn {
	b.Helper()
	c, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	benchACL  = zksim.OpenACL()
	benchData = []byte("0123456789")
)

// pathSupply hands out the paths dir/0, dir/1, ... one per iteration of a
// b.Loop benchmark. It makes them (and, with create, creates the nodes) in
// batches with the timer stopped, so that the loop measures only the
// operation on the path.
type pathSupply struct {
	b      *testing.B
	dir    string
	create func(p string) // nil: paths only
	paths  []string
	next   int
}

func (s *pathSupply) get() string {
	if s.next == len(s.paths) {
		s.b.StopTimer()
		for i, n := len(s.paths), max(2*len(s.paths), 1024); i < n; i++ {
			p := s.dir + "/" + strconv.Itoa(i)
			if s.create != nil {
				s.create(p)
			}
			s.paths = append(s.paths, p)
		}
		s.b.StartTimer()
	}
	s.next++
	return s.paths[s.next-1]
}

func mustCreate(b *testing.B, c zksim.Conn, path string) {
	b.Helper()
	if _, err := c.Create(context.Background(), path, nil, zksim.ModePersistent, benchACL); err != nil {
		b.Fatalf("create %s: %v", path, err)
	}
}

// benchCreate: create a persistent node with 10 bytes of data.
func benchCreate(b *testing.B, c, _ zksim.Conn, root string) {
	ctx := context.Background()
	paths := &pathSupply{b: b, dir: root}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Create(ctx, paths.get(), benchData, zksim.ModePersistent, benchACL); err != nil {
			b.Fatal(err)
		}
	}
}

// benchGet: read a node holding 10 bytes.
func benchGet(b *testing.B, c, _ zksim.Conn, root string) {
	ctx := context.Background()
	p := root + "/g"
	if _, err := c.Create(ctx, p, benchData, zksim.ModePersistent, benchACL); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Get(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSet: overwrite a node's data with 10 bytes, any version.
func benchSet(b *testing.B, c, _ zksim.Conn, root string) {
	ctx := context.Background()
	p := root + "/s"
	mustCreate(b, c, p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Set(ctx, p, benchData, -1); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDelete: delete a childless node (created before the timer starts).
func benchDelete(b *testing.B, c, _ zksim.Conn, root string) {
	ctx := context.Background()
	paths := &pathSupply{b: b, dir: root, create: func(p string) { mustCreate(b, c, p) }}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Delete(ctx, paths.get(), -1); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChildren: list a node with 10 children.
func benchChildren(b *testing.B, c, _ zksim.Conn, root string) {
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		mustCreate(b, c, root+"/"+strconv.Itoa(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Children(ctx, root); err != nil {
			b.Fatal(err)
		}
	}
}

// benchWatchRoundTrip: one session sets a data watch, another changes the
// node, the first receives the event.
func benchWatchRoundTrip(b *testing.B, watcher, writer zksim.Conn, root string) {
	ctx := context.Background()
	p := root + "/w"
	mustCreate(b, watcher, p)
	b.ReportAllocs()
	for b.Loop() {
		_, _, ch, err := watcher.GetW(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := writer.Set(ctx, p, nil, -1); err != nil {
			b.Fatal(err)
		}
		if ev := <-ch; ev.Type != zksim.EventNodeDataChanged {
			b.Fatal(ev)
		}
	}
}
