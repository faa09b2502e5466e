package zkmem_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Benchmarks of single operations on an in-process Conn. Run with
//
//	go test -run '^$' -bench . -benchmem ./zkmem/
//
// The tree-size variants (n=...) show that the cost per operation stays
// flat as the tree grows.

var benchACL = zksim.OpenACL()

func benchConn(b *testing.B) (*zkmem.Server, *zkmem.Conn) {
	b.Helper()
	srv := zkmem.NewServer(zkmem.Options{})
	b.Cleanup(srv.Close)
	c, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	return srv, c
}

// fill creates n nodes under /fill, spread over 1,000 parents.
func fill(b *testing.B, c *zkmem.Conn, n int) {
	b.Helper()
	ctx := context.Background()
	mustCreate(b, c, "/fill")
	for p := 0; p < 1000 && p < n; p++ {
		mustCreate(b, c, "/fill/"+strconv.Itoa(p))
	}
	for i := 0; i < n; i++ {
		if _, err := c.Create(ctx, "/fill/"+strconv.Itoa(i%1000)+"/"+strconv.Itoa(i), nil, zksim.ModePersistent, benchACL); err != nil {
			b.Fatal(err)
		}
	}
}

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

func mustCreate(b testing.TB, c zksim.Conn, path string) {
	b.Helper()
	if _, err := c.Create(context.Background(), path, nil, zksim.ModePersistent, benchACL); err != nil {
		b.Fatal(err)
	}
}

var treeSizes = []int{0, 10_000, 100_000}

func BenchmarkCreate(b *testing.B) {
	for _, size := range treeSizes {
		b.Run(fmt.Sprintf("n=%d", size), func(b *testing.B) {
			_, c := benchConn(b)
			fill(b, c, size)
			mustCreate(b, c, "/b")
			ctx := context.Background()
			paths := &pathSupply{b: b, dir: "/b"}
			data := []byte("0123456789")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Create(ctx, paths.get(), data, zksim.ModePersistent, benchACL); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range treeSizes {
		b.Run(fmt.Sprintf("n=%d", size), func(b *testing.B) {
			_, c := benchConn(b)
			fill(b, c, size)
			ctx := context.Background()
			if _, err := c.Create(ctx, "/g", []byte("0123456789"), zksim.ModePersistent, benchACL); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Get(ctx, "/g"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSet(b *testing.B) {
	_, c := benchConn(b)
	ctx := context.Background()
	mustCreate(b, c, "/s")
	data := []byte("0123456789")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Set(ctx, "/s", data, -1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDelete(b *testing.B) {
	_, c := benchConn(b)
	ctx := context.Background()
	mustCreate(b, c, "/d")
	paths := &pathSupply{b: b, dir: "/d", create: func(p string) { mustCreate(b, c, p) }}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Delete(ctx, paths.get(), -1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateDeleteLoneChild creates and deletes a parent's only
// child, as the lock and election recipes do: the parent's children go from
// none to one and back each time.
func BenchmarkCreateDeleteLoneChild(b *testing.B) {
	_, c := benchConn(b)
	ctx := context.Background()
	mustCreate(b, c, "/x")
	data := []byte("0123456789")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Create(ctx, "/x/y", data, zksim.ModePersistent, benchACL); err != nil {
			b.Fatal(err)
		}
		if err := c.Delete(ctx, "/x/y", -1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChildren(b *testing.B) {
	for _, kids := range []int{10, 1000} {
		b.Run(fmt.Sprintf("children=%d", kids), func(b *testing.B) {
			_, c := benchConn(b)
			ctx := context.Background()
			mustCreate(b, c, "/c")
			for i := 0; i < kids; i++ {
				mustCreate(b, c, "/c/"+strconv.Itoa(i))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Children(ctx, "/c"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchRoundTrip: one session sets a data watch, another changes
// the node, the first receives the event.
func BenchmarkWatchRoundTrip(b *testing.B) {
	srv, watcher := benchConn(b)
	writer, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	mustCreate(b, watcher, "/w")
	b.ReportAllocs()
	for b.Loop() {
		_, _, ch, err := watcher.GetW(ctx, "/w")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := writer.Set(ctx, "/w", nil, -1); err != nil {
			b.Fatal(err)
		}
		if ev := <-ch; ev.Type != zksim.EventNodeDataChanged {
			b.Fatal(ev)
		}
	}
}

// BenchmarkMemoryPerZnode creates 1,000,000 znodes (1,000 parents of 1,000
// children, names of 7 bytes, no data) and reports the heap they take per
// znode beyond their path strings (overhead-B/znode).
func BenchmarkMemoryPerZnode(b *testing.B) {
	const parents, perParent = 1000, 1000
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		srv := zkmem.NewServer(zkmem.Options{})
		c, err := srv.Connect()
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		pathBytes := 0
		for p := 0; p < parents; p++ {
			parent := fmt.Sprintf("/p%06d", p)
			mustCreate(b, c, parent)
			pathBytes += len(parent)
			for k := 0; k < perParent-1; k++ {
				path := fmt.Sprintf("%s/c%06d", parent, k)
				if _, err := c.Create(ctx, path, nil, zksim.ModePersistent, benchACL); err != nil {
					b.Fatal(err)
				}
				pathBytes += len(path)
			}
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		n := parents * perParent
		total := float64(after.HeapAlloc - before.HeapAlloc)
		b.ReportMetric(total/float64(n), "B/znode")
		b.ReportMetric((total-float64(pathBytes))/float64(n), "overhead-B/znode")
		runtime.KeepAlive(c)
		srv.Close()
		b.StartTimer()
	}
}

// BenchmarkCreateDeleteEphemeral creates and deletes an ephemeral, as the
// lock recipes do, in a session that holds held other ephemerals: the
// session's set of ephemerals gains and loses one entry each time.
func BenchmarkCreateDeleteEphemeral(b *testing.B) {
	for _, held := range []int{0, 1000} {
		b.Run("held="+strconv.Itoa(held), func(b *testing.B) {
			_, c := benchConn(b)
			ctx := context.Background()
			mustCreate(b, c, "/x")
			for i := range held {
				if _, err := c.Create(ctx, "/x/h"+strconv.Itoa(i), nil, zksim.ModeEphemeral, benchACL); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Create(ctx, "/x/y", nil, zksim.ModeEphemeral, benchACL); err != nil {
					b.Fatal(err)
				}
				if err := c.Delete(ctx, "/x/y", -1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
